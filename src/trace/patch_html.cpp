// journey patch --html: the layer x position (or layer x head) grid of an activation-patching
// run as one self-contained page, in the trace page's shell (same CSP, style and helpers).
#include "journey/trace/trace_html.h"

namespace journey {

std::string html_page(const nlohmann::json& doc, const std::string& title, const std::string& script);  // trace_html.cpp

namespace {

const char* const kPatchJs = R"JS(
// ---- journey patch --html ----
function renderPatch(app, d) {
  const what = `${shown(d.target.token)} #${d.target.id}` + (d.contrast ? ` \u2212 ${shown(d.contrast.token)} #${d.contrast.id}` : '');
  section(app, 'Activation patching', `The corrupted prompt re-run with the clean run\u2019s ${d.site === 'head' ? 'head output (every position)' : d.site} ` +
          `patched in at one ${d.columns === 'head' ? '(layer, head)' : '(layer, position)'}; each cell: the fraction of the ` +
          `${d.metric === 'prob' ? 'target\u2019s probability' : 'logit difference'} it restores, (patched \u2212 corrupted) / (clean \u2212 corrupted). ` +
          'Red: restores; blue: moves away. Hover a cell for its numbers.');
  const f = el('div', 'facts');
  const fact = (label, value) => { const x = el('div', '', label + ' '); x.appendChild(el('b', '', value)); f.appendChild(x); };
  fact('target', what);
  fact(d.metric + ' clean', fix(d.clean, 5));
  fact(d.metric + ' corrupted', fix(d.corrupted, 5));
  fact('site', d.site);
  app.appendChild(f);
  const t = el('table', 'attr');
  t.id = 'patch-grid';
  const head = el('tr');
  head.appendChild(el('th', '', 'layer'));
  const n = d.rows.length ? d.rows[0].restored.length : 0;
  for (let c = 0; c < n; ++c) {
    if (d.columns === 'head') { head.appendChild(el('th', '', `h${c}`)); continue; }
    const tk = d.tokens[c], differs = tk.clean.id !== tk.corrupted.id;
    const th = el('th', '', (differs ? '*' : '') + clip(shown(tk.clean.token), 10));
    th.title = `position ${c}: clean ${shown(tk.clean.token)} #${tk.clean.id}, corrupted ${shown(tk.corrupted.token)} #${tk.corrupted.id}`;
    head.appendChild(th);
  }
  t.appendChild(head);
  d.rows.forEach(r => {
    const tr = el('tr');
    tr.appendChild(el('th', '', r.final ? 'final' : `L${r.layer}`));
    r.restored.forEach((v, c) => {
      const td = el('td', 'num', fix(Math.abs(v) < 5e-3 ? 0 : v, 2));  // no -0.00
      td.style.background = diverge(v);
      td.tabIndex = 0;
      td.dataset.value = String(v);
      td.title = `${r.final ? 'final residual' : 'layer ' + r.layer}, ${d.columns} ${c}: ${d.metric} ${r.metric[c]}, restored ${v}`;
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
  app.appendChild(t);
  if (d.columns !== 'head') app.appendChild(el('p', 'note', '* marks the positions where the prompts differ.'));
}

function patchMain() {
  const d = JSON.parse(document.getElementById('trace-data').textContent);
  const app = document.getElementById('app');
  renderPatch(app, d);
  renderProvenance(app, d);
  if (document.body.dataset.status !== 'error') document.body.dataset.status = 'rendered';
}
)JS";

}  // namespace

std::string patch_html(const nlohmann::json& doc, const std::string& title) {
    return html_page(doc, title, std::string(kPatchJs) + "patchMain();");
}

}  // namespace journey
