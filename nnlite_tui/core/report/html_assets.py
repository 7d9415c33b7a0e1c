"""The CSS and the few lines of JavaScript inlined into every HTML report (no file is loaded at view time)."""

CSS = """
:root { --fg: #1d232b; --muted: #5b6672; --line: #d5dbe1; --bg: #fff; --head: #f3f5f7; --bad: #c0392b;
        --good: #2e7d32; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; padding: 16px 24px 48px; max-width: 1400px; }
h1 { font-size: 22px; margin: 4px 0; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 120px; }
.card b { display: block; font-size: 20px; }
.status-done { color: var(--good); } .status-failed { color: var(--bad); }
table { border-collapse: collapse; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--head); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
svg.plot { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
svg .title { font-weight: 600; font-size: 13px; }
svg .tick, svg .legend { font-size: 10px; fill: var(--muted); }
svg .label { font-size: 11px; fill: var(--fg); }
svg .axis { stroke: #8a949e; } svg .grid { stroke: #eceff2; }
svg .diag { stroke: #8a949e; stroke-dasharray: 4 3; }
svg .pt { fill-opacity: 0.8; stroke: #fff; stroke-width: 0.5; }
svg .median { stroke: var(--fg); stroke-width: 2; } svg .whisker { stroke: #8a949e; }
svg .dot { fill-opacity: 0.5; }
svg .series { stroke-width: 1; }
#controls { display: flex; gap: 12px; align-items: center; margin: 8px 0; }
#controls input { padding: 4px 8px; width: 280px; }
#models th { cursor: pointer; user-select: none; position: sticky; top: 0; }
#models th.sorted-asc::after { content: " \\25B2"; } #models th.sorted-desc::after { content: " \\25BC"; }
#models tr.row { cursor: pointer; } #models tr.row:hover { background: #f7f9fb; }
#models tr.row td:first-child::before { content: "\\25B8 "; color: var(--muted); }
#models tbody.open tr.row td:first-child::before { content: "\\25BE "; }
#models tr.detail > td { background: #fafbfc; padding: 10px 16px; }
.detail-grid { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.kv td { border: none; padding: 1px 8px 1px 0; } .kv td:first-child { color: var(--muted); }
.block { margin: 10px 0; } #settings { display: inline; } .setting { margin-right: 14px; white-space: nowrap; }
.err { color: var(--bad); white-space: pre-wrap; max-width: 900px; }
"""

# Sorting and filtering work on whole <tbody> elements: each model's row travels with its details.
JS = """
(function () {
  const table = document.getElementById('models');
  if (!table) return;
  const heads = Array.from(table.tHead.rows[0].cells);
  const bodies = () => Array.from(table.tBodies);
  const cellValue = (body, i) => {
    const cell = body.rows[0].cells[i];
    const v = cell.getAttribute('data-v');
    return v === null ? cell.textContent.trim().toLowerCase() : v;
  };
  heads.forEach((th, i) => th.addEventListener('click', () => {
    const numeric = th.classList.contains('num');
    const desc = th.classList.contains('sorted-asc');
    heads.forEach(h => h.classList.remove('sorted-asc', 'sorted-desc'));
    th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
    const key = b => {
      const v = cellValue(b, i);
      if (!numeric) return v;
      return v === '' ? Infinity : parseFloat(v);
    };
    const sorted = bodies().sort((a, b) => {
      const ka = key(a), kb = key(b);
      if (numeric && ka === Infinity && kb === Infinity) return 0;
      if (numeric && ka === Infinity) return 1;
      if (numeric && kb === Infinity) return -1;
      const c = ka < kb ? -1 : ka > kb ? 1 : 0;
      return desc ? -c : c;
    });
    sorted.forEach(b => table.appendChild(b));
  }));
  const text = document.getElementById('filter-text');
  const status = document.getElementById('filter-status');
  const shown = document.getElementById('shown');
  const apply = () => {
    const words = text.value.toLowerCase().split(/\\s+/).filter(Boolean);
    const st = status.value;
    let n = 0;
    bodies().forEach(b => {
      const hay = b.rows[0].textContent.toLowerCase();
      const ok = words.every(w => hay.includes(w)) && (!st || b.getAttribute('data-status') === st);
      b.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = n;
  };
  text.addEventListener('input', apply);
  status.addEventListener('change', apply);
  table.addEventListener('click', ev => {
    const row = ev.target.closest('tr.row');
    if (!row) return;
    const body = row.parentElement;
    const cell = body.rows[1].cells[0];
    const template = cell.querySelector('template');
    if (template) cell.replaceChildren(template.content.cloneNode(true));
    body.classList.toggle('open');
    body.rows[1].hidden = !body.classList.contains('open');
  });
  apply();
})();
"""
