// The trace page's interactive panels (trace_html.h): provenance and the sampling panel, and
// the page state a URL fragment sets (#temp=0.7&top_k=20: what a test or a shared link wants).
// main() (trace_html_assets.cpp) is called after this part of the script.
// Kept apart from trace_html_assets.cpp, the static report: both are one <style> and one
// <script> in the page (the functions here are called from its main()).
namespace journey {

extern const char* const kTracePanelsCss;
extern const char* const kTracePanelsJs;

const char* const kTracePanelsCss = R"CSS(
:root { --head:#f3f4f6; --card:#fff; color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --ink:#e5e7eb; --muted:#9ca3af; --line:#374151; --accent:#f87171; --bg:#111827; --head:#1f2937; --card:#1f2937; }
  .tok { background: var(--card); }
  .tok.traced { background: #7f1d1d; }
  table.lens th, table.attr th { background: var(--head); }
  .head canvas { background: var(--card); }
  svg line { stroke: var(--line); }
}
.tokens .tok[role=button] { cursor: pointer; }
.tokens .tok[role=button]:hover { border-color: #2563eb; }
select { font: inherit; }
dl.prov { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; font-size: 12.5px; }
dl.prov dt { color: var(--muted); }
dl.prov dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
.controls { display: grid; grid-template-columns: max-content 260px 64px; gap: 4px 10px; align-items: center;
            font-size: 12.5px; margin-bottom: 8px; }
.controls output { font-family: ui-monospace, monospace; }
table.samp { border-collapse: collapse; font-size: 12px; }
table.samp th, table.samp td { border: 1px solid var(--line); padding: 1px 6px; text-align: left; }
table.samp th { background: var(--head); font-weight: 600; }
table.samp td.num { text-align: right; font-family: ui-monospace, monospace; font-variant-numeric: tabular-nums; }
table.samp td.bar { width: 220px; }
table.samp td.bar span { display: block; height: 10px; background: #2563eb; border-radius: 2px; }
table.samp td.tok { font-family: ui-monospace, monospace; white-space: pre; }
.warn { color: var(--accent); font-weight: 600; }
:focus-visible { outline: 2px solid #2563eb; outline-offset: 1px; }
)CSS";

const char* const kTracePanelsJs = R"JS(
// ---- Provenance ----
function renderProvenance(app, d) {
  const p = d.provenance;
  if (!p) return;
  section(app, 'Provenance', 'What made this page: the program, the model file (its SHA-256), the command and the date.');
  const dl = el('dl', 'prov');
  dl.id = 'provenance';
  const item = (k, v, title) => {
    if (v === undefined || v === null || v === '') return;
    dl.appendChild(el('dt', '', k));
    const dd = el('dd', '', String(v));
    dd.dataset.key = k;
    if (title) dd.title = title;
    dl.appendChild(dd);
  };
  item('journey', p.journey);
  item('model', p.model);
  (p.files || []).forEach(f => item(f.name, `sha256 ${f.sha256.slice(0, 16)}\u2026  ${f.bytes} bytes`, f.sha256));
  item('architecture', p.architecture);
  item('weights dtype', p.dtype);
  item('command', (p.command || []).map(a => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`).join(' '));
  item('date', p.date);
  app.appendChild(dl);
}

// ---- Sampling: generate's sampler chain (src/decode/sampler.cpp), recomputed in the page ----
// Floats where the sampler has floats (Math.fround), doubles where it has doubles, stages in its
// order: top-k -> top-p -> min-p -> temperature -> softmax. The page holds the best
// d.sampling.top logits and what the other tokens add up to; when a setting keeps tokens beyond
// those, the panel says so instead of showing numbers it cannot know.
function f32(x) { return Math.fround(x); }
function samplerCandidates(s, o) {
  const V = s.n_vocab, N = s.top.length;
  let c = s.top.map(x => ({id: x.id, token: x.token, logit: x.logit, p: 0}));
  let tail = V > N ? 'all' : 'none';  // the tokens not stored: all of them (their sum is known), some, none
  const out = (why) => ({cands: c, exact: !why, why: why || ''});
  const softmax = (tailSum) => {
    const m = c[0].logit;
    let sum = 0;
    for (const x of c) sum += Math.exp(x.logit - m);
    sum += tailSum;
    for (const x of c) x.p = f32(Math.exp(x.logit - m) / sum);
  };
  const topK = o.top_k, topP = f32(o.top_p), minP = f32(o.min_p), temp = f32(o.temp);
  if (topK > 0 && topK < V) {
    if (topK <= N) { c = c.slice(0, topK); tail = 'none'; } else tail = 'some';
  }
  if (tail === 'some') return out(`top-k ${topK} keeps tokens beyond the ${N} most likely this page holds`);
  softmax(tail === 'all' ? s.tail_exp_sum : 0);
  if (topP < 1) {
    let cum = 0, keep = -1;
    for (let i = 0; i < c.length; ++i) {
      cum += c[i].p;
      if (cum >= topP) { keep = i + 1; break; }
    }
    if (keep < 0 && tail !== 'none') return out(`top-p ${o.top_p} reaches beyond the ${N} most likely tokens this page holds`);
    if (keep < 0) keep = c.length;
    c = c.slice(0, Math.max(keep, 1));
    tail = 'none';
    softmax(0);
  }
  if (minP > 0 && c.length) {
    const m = c[0].logit, threshold = Math.log(minP);
    c = c.filter(x => x.logit - m >= threshold);
    if (tail !== 'none') {
      if (s.tail_max === null || s.tail_max - m < threshold) tail = 'none';
      else return out(`min-p ${o.min_p} keeps tokens beyond the ${N} most likely this page holds`);
    }
  }
  if (temp === 0) { c = [c[0]]; tail = 'none'; }
  else c.forEach(x => { x.logit = f32(x.logit / temp); });
  if (tail !== 'none') return out(`every token survives (top-k 0, top-p 1, min-p 0): beyond the ${N} this page holds`);
  softmax(0);
  return out('');
}

const samplerState = {temp: 0.8, top_k: 40, top_p: 0.95, min_p: 0.05};  // generate's defaults (sampler.h)
function renderSampling(app, d) {
  const s = d.sampling;
  if (!s || !s.top.length) return;
  section(app, 'Sampling', 'What journey generate would draw the next token from, with these settings: its sampler ' +
          '(top-k, then top-p, then min-p, then temperature; repeat penalty off) recomputed here from the model\u2019s logits.');
  const box = el('div', 'controls');
  box.id = 'sampler-controls';
  const state = samplerState;
  const table = el('table', 'samp');
  table.id = 'sampler-out';
  const note = el('p', 'note');
  note.id = 'sampler-note';
  const model = (() => {  // the model's own distribution (temperature 1, whole vocabulary)
    const m = s.top[0].logit;
    let sum = s.tail_exp_sum;
    for (const x of s.top) sum += Math.exp(x.logit - m);
    const p = new Map();
    for (const x of s.top) p.set(x.id, Math.exp(x.logit - m) / sum);
    return p;
  })();
  const redraw = () => {
    const r = samplerCandidates(s, state);
    table.replaceChildren();
    table.dataset.exact = String(r.exact);
    table.dataset.count = String(r.exact ? r.cands.length : -1);
    const head = el('tr');
    ['#', 'token', 'id', 'model p', 'sampler p', ''].forEach(h => head.appendChild(el('th', '', h)));
    table.appendChild(head);
    if (!r.exact) {
      note.className = 'note warn';
      note.textContent = 'Not shown: ' + r.why + '.';
      return;
    }
    note.className = 'note';
    note.textContent = `${r.cands.length} candidate${r.cands.length === 1 ? '' : 's'} survive` +
                       (r.cands.length > 40 ? ' (the first 40 shown)' : '') + '.';
    r.cands.slice(0, 40).forEach((x, i) => {
      const tr = el('tr');
      tr.dataset.id = String(x.id);
      tr.dataset.p = String(x.p);
      tr.appendChild(el('td', 'num', String(i + 1)));
      tr.appendChild(el('td', 'tok', clip(shown(x.token), 24)));
      tr.appendChild(el('td', 'num', String(x.id)));
      tr.appendChild(el('td', 'num', fix(model.get(x.id), 4)));
      const p = el('td', 'num', fix(x.p, 4));
      p.title = `p ${x.p}, logit after temperature ${x.logit}`;
      tr.appendChild(p);
      const bar = el('td', 'bar'), b = el('span');
      b.style.width = (100 * x.p).toFixed(1) + '%';
      bar.appendChild(b);
      tr.appendChild(bar);
      table.appendChild(tr);
    });
  };
  const control = (key, label, min, max, step, fmt) => {
    const id = 'sampler-' + key.replace('_', '-');
    const lab = el('label', '', label);
    lab.htmlFor = id;
    const input = el('input');
    Object.assign(input, {type: 'range', id, min, max, step, value: state[key]});
    const shown = el('output', '', fmt(state[key]));
    shown.htmlFor = id;
    input.addEventListener('input', () => { state[key] = Number(input.value); shown.textContent = fmt(state[key]); redraw(); });
    box.append(lab, input, shown);
  };
  control('temp', 'temperature', 0, 2, 0.01, v => v.toFixed(2));
  control('top_k', 'top-k (0 = off)', 0, s.top.length, 1, v => String(v));
  control('top_p', 'top-p (1 = off)', 0.01, 1, 0.01, v => v.toFixed(2));
  control('min_p', 'min-p (0 = off)', 0, 1, 0.01, v => v.toFixed(2));
  app.appendChild(box);
  app.appendChild(note);
  app.appendChild(table);
  redraw();
}

// ---- Every position (--pos all): the page rebuilds one position's view from the compact data ----
function viewAt(d, p) {
  if (!d.positions || p === d.position) return d;
  const P = d.positions[p];
  const tok = id => ({id, token: d.vocab[String(id)] !== undefined ? d.vocab[String(id)] : `#${id}`});
  const ranked = list => list.map(([id, prob]) => Object.assign(tok(id), {prob}));
  const v = Object.assign({}, d);
  v.position = p;
  v.target = Object.assign(tok(P.target), {final_rank: P.final_rank, final_prob: P.final_prob});
  v.embedding = Object.assign({}, d.embedding, {token_norm: P.embedding[0], position_norm: P.embedding[1], sum_norm: P.embedding[2]});
  v.final = {top: ranked(P.final.top), entropy: P.final.entropy};
  v.layers = d.layers.map((l, i) => {
    const L = P.layers[i];
    return {layer: l.layer, resid_pre: {norm: L.r[0]}, resid_mid: {norm: L.r[1]}, resid_post: {norm: L.r[2]},
            attn: {out_norm: L.r[3], heads: l.attn.heads.map((h, j) => ({
              head: h.head, entropy: L.he[j] / 1000, out_norm: null,  // milli-nats; no |out| per position
              pattern: h.full_pattern ? h.full_pattern[p] : null, full_pattern: h.full_pattern}))},
            mlp: {out_norm: L.r[4]},
            lens: {top: ranked(L.lens.top), entropy: L.lens.entropy, kl_to_final: L.lens.kl,
                   target_rank: L.lens.rank, target_prob: L.lens.prob}};
  });
  v.attribution = null;
  v.sampling = {n_vocab: d.sampling.n_vocab, top: P.sampling.top.map(([id, logit]) => Object.assign(tok(id), {logit})),
                tail_exp_sum: P.sampling.tail_exp_sum, tail_max: P.sampling.tail_max};
  return v;
}

// Render position p; with --pos all every prompt token is a button that traces it.
function showPosition(app, d, p) {
  const v = viewAt(d, p);
  renderAll(app, v);
  document.body.dataset.position = String(p);
  if (!d.positions) return;
  app.querySelectorAll('.tokens .tok').forEach((t, i) => {
    t.tabIndex = 0;
    t.setAttribute('role', 'button');
    t.setAttribute('aria-pressed', String(i === p));
    t.title += ' \u2014 click (or Enter) to trace it';
    t.addEventListener('click', () => { showPosition(app, d, i); app.querySelectorAll('.tokens .tok')[i].focus(); });
    t.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); t.click(); } });
  });
}

function renderPositionNote(app, d) {
  const notes = [];
  if (d.positions) notes.push('Every position is in this page: click a token (or Tab to it and press Enter) to trace it.');
  else notes.push('This page traces one position (journey trace --pos all --html keeps every one).');
  if (d.positions && !d.attribution) notes.push('The logit attribution is computed at the position given to --pos only.');
  if (d.full_patterns_omitted) notes.push('Whole attention patterns are left out (' + d.full_patterns_omitted + ').');
  app.appendChild(el('p', 'note', notes.join(' ')));
}

// ---- Layer x head grid, coloured by a chosen measure ----
const headGridState = {measure: 'entropy'};
function renderHeadGrid(app, d) {
  if (!d.layers.length || !d.layers.some(l => l.attn.heads.length)) return;
  section(app, 'Heads', 'Every layer\u2019s heads at the traced position, coloured by the measure chosen; hover a cell for its numbers.');
  const measures = {entropy: 'entropy of the attention row (nats)'};
  if (d.layers.some(l => l.attn.heads.some(h => h.out_norm !== null))) measures.out = '|head output| through W_O';
  if (d.attribution) measures.attr = 'direct logit attribution to the target';
  if (!measures[headGridState.measure]) headGridState.measure = 'entropy';
  const pick = el('select');
  pick.id = 'head-measure';
  pick.setAttribute('aria-label', 'measure');
  for (const [k, label] of Object.entries(measures)) {
    const o = el('option', '', label);
    o.value = k;
    if (k === headGridState.measure) o.selected = true;
    pick.appendChild(o);
  }
  const lab = el('label', 'note', 'colour by ');
  lab.appendChild(pick);
  app.appendChild(lab);
  const holder = el('div');
  app.appendChild(holder);
  const value = (l, li, h, hi) => headGridState.measure === 'entropy' ? h.entropy
      : headGridState.measure === 'out' ? h.out_norm : d.attribution.layers[li].heads[hi];
  const draw = () => {
    const t = el('table', 'attr');
    t.id = 'head-grid';
    t.dataset.measure = headGridState.measure;
    const H = Math.max(...d.layers.map(l => l.attn.heads.length));
    const head = el('tr');
    ['layer'].concat(Array.from({length: H}, (_, h) => `h${h}`)).forEach(x => head.appendChild(el('th', '', x)));
    t.appendChild(head);
    let max = 1e-12;
    d.layers.forEach((l, li) => l.attn.heads.forEach((h, hi) => { max = Math.max(max, Math.abs(value(l, li, h, hi))); }));
    d.layers.forEach((l, li) => {
      const tr = el('tr');
      tr.appendChild(el('th', '', `L${l.layer}`));
      l.attn.heads.forEach((h, hi) => {
        const v = value(l, li, h, hi);
        const td = el('td', 'num', fix(v, 2));
        td.style.background = headGridState.measure === 'attr' ? diverge(v / max) : heat(Math.abs(v) / max);
        td.style.color = headGridState.measure === 'attr' ? '' : ink(Math.abs(v) / max);
        td.title = `layer ${l.layer} head ${h.head}: entropy ${fix(h.entropy, 4)} nats, |out| ${fix(h.out_norm, 4)}` +
                   (d.attribution ? `, attribution ${fix(d.attribution.layers[li].heads[hi], 4)}` : '');
        td.dataset.value = String(v);
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    holder.replaceChildren(t);
  };
  pick.addEventListener('change', () => { headGridState.measure = pick.value; draw(); });
  draw();
}

// #pos=3&lens=ID&temp=0.7&top_k=20&top_p=0.9&min_p=0.02&measure=out: each acts as a person would: a
// click on the token, a slider moved (its input event), a measure chosen (its change event).
function applyFragment(app, d) {
  const h = location.hash.replace(/^#/, '');
  if (!h) return;
  for (const part of h.split('&')) {
    const [k, v] = part.split('=');
    if (v === undefined) continue;
    if (k === 'pos') {
      const t = app.querySelectorAll('.tokens .tok')[Number(v)];
      if (t) t.click();
      continue;
    }
    if (k === 'lens') {  // a click on that token's first cell in the logit lens
      const c = document.querySelector(`#lens td[data-id="${Number(v)}"]`);
      if (c) c.click();
      continue;
    }
    if (k === 'measure') {
      const s = document.getElementById('head-measure');
      if (s) { s.value = v; s.dispatchEvent(new Event('change')); }
      continue;
    }
    const input = document.getElementById('sampler-' + k.replace('_', '-'));
    if (input) { input.value = decodeURIComponent(v); input.dispatchEvent(new Event('input')); }
  }
}
)JS";

}  // namespace journey
