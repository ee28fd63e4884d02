// Which tokenizer a GGUF file describes: tokenizer.ggml.model names the algorithm.
#include "journey/errors.h"
#include "journey/spm_tokenizer.h"

namespace journey {

std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const ModelFile& mf) {
    auto it = mf.metadata.find("tokenizer.ggml.model");
    if (it == mf.metadata.end() || !it->is_string())
        throw ModelError(mf.path.string() + ": no tokenizer in the file (tokenizer.ggml.model is missing)");
    const std::string model = it->get<std::string>();
    if (model == "llama") return SpmTokenizer::from_gguf(mf);
    if (model == "gpt2") {
        // TODO(lead): build the GPT-2 BpeTokenizer (branch `tok`) from tokenizer.ggml.tokens and
        // tokenizer.ggml.merges ("a b" strings, rank = index) once it has an in-memory constructor.
        throw ModelError(mf.path.string() + ": GPT-2 tokenizers in GGUF files are not supported yet");
    }
    throw ModelError(mf.path.string() + ": unsupported tokenizer model '" + model + "' (journey knows llama, gpt2)");
}

}  // namespace journey
