#!/usr/bin/env python3
"""Render conversations with a family's chat template through Python's jinja2, the independent
reference journey's Jinja engine is tested against (Debian python3-jinja2; never a dependency of
the build: only its output is committed, tests/data/chat_templates/).

The environment is the one transformers renders chat templates in (apply_chat_template):
ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, the loopcontrols extension, a tojson
filter as json.dumps(ensure_ascii=False), raise_exception, and strftime_now at a fixed instant
(2025-01-15 10:30:00, the time journey's test renders at). The special tokens of the family's
special_tokens_map.json are variables, as transformers passes them.

    scripts/render_chat_cases.py OUT.json FAMILY=TOKENIZER_DIR [FAMILY=TOKENIZER_DIR ...]
"""
import datetime
import json
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

CONVERSATIONS = [
    ("user", [{"role": "user", "content": "Hello! How are you?"}], {}),
    ("system_user", [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "Capital of France?"}], {}),
    ("multi_turn", [{"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello! What can I do for you?"},
                    {"role": "user", "content": "Count to three.\nThen stop."}], {}),
    ("assistant_last", [{"role": "user", "content": "Say yes."}, {"role": "assistant", "content": "Yes."}], {}),
    ("thought_in_history", [{"role": "user", "content": "1 + 1?"},
                            {"role": "assistant", "content": "<think>\nOne and one.\n</think>\n\n2"},
                            {"role": "user", "content": "And 2 + 2?"}], {}),
    ("thinking_off", [{"role": "user", "content": "2 + 2?"}], {"enable_thinking": False}),
    ("thinking_on", [{"role": "user", "content": "2 + 2?"}], {"enable_thinking": True}),
    ("unicode", [{"role": "user", "content": "Ça va? 日本語 😀 \"quoted\" <tag>"}], {}),
    ("tools", [{"role": "user", "content": "Weather in Paris?"}], {"tools": [WEATHER_TOOL]}),
    ("tool_call", [{"role": "user", "content": "Weather in Paris?"},
                   {"role": "assistant", "content": "",
                    "tool_calls": [{"type": "function",
                                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                   {"role": "tool", "name": "get_weather", "content": "{\"temperature\": 21}"}],
     {"tools": [WEATHER_TOOL]}),
]


def environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[jinja2.ext.loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime(2025, 1, 15, 10, 30, 0).strftime(fmt)
    return env


def special_tokens(directory):
    out = {}
    for key, value in json.load(open(f"{directory}/special_tokens_map.json")).items():
        if isinstance(value, dict):
            out[key] = value["content"]
        elif isinstance(value, str):
            out[key] = value
    return out


def main():
    out_path, families = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
    env = environment()
    cases = []
    for family, directory in families:
        source = json.load(open(f"{directory}/tokenizer_config.json"))["chat_template"]
        template = env.from_string(source)
        for name, messages, extra in CONVERSATIONS:
            for add_generation_prompt in (True, False):
                if add_generation_prompt is False and messages[-1]["role"] != "assistant" and name != "user":
                    continue
                variables = dict(special_tokens(directory))
                variables.update({"tools": None, "documents": None})
                variables.update(extra)
                try:
                    rendered = template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                               **variables)
                except jinja2.exceptions.TemplateError as e:
                    rendered = None
                    error = str(e)
                case = {"family": family, "conversation": name, "messages": messages,
                        "add_generation_prompt": add_generation_prompt, "variables": variables}
                if rendered is None:
                    case["error"] = error
                else:
                    case["rendered"] = rendered
                cases.append(case)
    doc = {"renderer": f"Python jinja2 {jinja2.__version__} (Debian python3-jinja2), transformers-style environment",
           "templates": "each family's tokenizer_config.json chat_template (tests/data/convert/FAMILY/)",
           "cases": cases}
    with open(out_path, "w") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
