/* The run report: the data block's columns become the tables (Tabulator) and plots (ECharts).
   Plots are drawn when they scroll into view, so the table is usable as soon as it is built. */
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('nnlite-data').textContent);
  const S = D.strings, C = D.columns, N = C.model.length;
  const TEXT = ['family', 'task', 'device', 'runtime', 'backend', 'precision', 'status', 'flags', 'stage', 'cause'];
  const ROW_HEIGHT = 26;  // px: one line of the models table (report.css sets the cells' line height)
  const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
                   '#9c755f', '#bab0ac'];
  const esc = s => String(s == null ? '' : s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;',
    '"': '&quot;', "'": '&#39;'}[c]));
  const fmt = v => v == null ? '' : (Math.abs(v) >= 1e4 ? Math.round(v).toLocaleString('en') : String(v));
  const short = v => { if (v == null) return ''; for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']])
    if (Math.abs(v) >= d) return +(v / d).toPrecision(3) + s; return String(+v.toPrecision(3)); };

  // --- rows from columns -------------------------------------------------------------------------------
  const decoded = {};
  TEXT.forEach(k => { decoded[k] = C[k].map(v => v == null ? '' : S[v]); });
  const rows = new Array(N);
  const keys = Object.keys(C);
  for (let i = 0; i < N; i++) {
    const r = {i: i};
    for (const k of keys) r[k] = decoded[k] ? decoded[k][i] : C[k][i];
    r.group = r.device + ' · ' + (r.runtime && r.runtime !== D.default_runtime ? r.runtime + ' · ' : '') + r.precision;
    r.hay = [r.model, r.family, r.task, r.device, r.runtime, r.backend, r.precision, r.status, r.flags, r.stage,
             r.cause].join(' ').toLowerCase();
    rows[i] = r;
  }
  const distinct = k => Array.from(new Set(rows.map(r => r[k]).filter(v => v !== ''))).sort();
  const any = k => rows.some(r => r[k] != null && r[k] !== '');

  // --- the models table ----------------------------------------------------------------------------------
  const FLAGS = D.flags;
  const flagHtml = codes => codes ? codes.split(' ').map(c => `<span class="flag ${c === 'unstable' ||
    c === 'compute' ? 'bad' : ''}" title="${esc(FLAGS[c][1])}">${esc(FLAGS[c][0])}</span>`).join('') : '';
  // Numbers compared as numbers, empty cells last in either direction: what Tabulator's 'number' sorter
  // does, without turning both sides into strings and parsing them back on every comparison.
  const byNumber = (a, b, ra, rb, col, dir) => {
    const noA = typeof a !== 'number' || isNaN(a), noB = typeof b !== 'number' || isNaN(b);
    if (!noA && !noB) return a - b;
    if (noA && noB) return 0;
    return (noA ? 1 : -1) * (dir === 'asc' ? 1 : -1);
  };
  const num = {hozAlign: 'right', sorter: byNumber, formatter: c => fmt(c.getValue())};
  const interval = (lo, hi) => c => { const d = c.getData(); return d[lo] == null ? '' : `${d[lo]}–${d[hi]}`; };
  // The columns that answer most questions come first, so that they are on screen at 1,280 px;
  // the rest are one click away in the column chooser.
  const columns = [
    {title: 'model', field: 'model', frozen: true, width: 200, tooltip: true},
    {title: 'family', field: 'family', width: 100, tooltip: true},
    {title: 'task', field: 'task', width: 110, visible: distinct('task').length > 1},
    {title: 'device', field: 'device', width: 100, tooltip: true},
    {title: 'runtime', field: 'runtime', visible: distinct('runtime').length > 1},
    {title: 'backend', field: 'backend', visible: false},
    {title: 'precision', field: 'precision', width: 74},
    // status and, for a failed or unstable unit, why: beside each other, so the cause is on screen at 1,280 px
    {title: 'status · cause', field: 'status', width: 240, cssClass: 'cause-cell', formatter: c => {
      const d = c.getData(), why = d.stage && d.cause ? d.stage + ': ' + d.cause : d.stage || d.cause;
      return `<span class="status-${esc(d.status)}">${esc(d.status)}</span>` +
        (why ? ` <span class="cause" title="${esc(why)}">${esc(why)}</span>` : ''); }},
    {title: 'median ms', field: 'median', ...num, width: 82},
    {title: '95% interval ms', field: 'low', ...num, formatter: interval('low', 'high'), width: 140,
     headerTooltip: 'within this session: Student t interval on the round medians'},
    {title: 'between sessions ms', field: 's_low', ...num, formatter: interval('s_low', 's_high'), width: 140,
     visible: any('s_low'), headerTooltip: 'interval across sessions (another day, a re-measurement)'},
    {title: 'ms / GFLOP', field: 'ms_gflop', ...num, width: 84, headerTooltip: 'median ms per 10^9 FLOPs of the model'},
    {title: 'FLOPs', field: 'flops', ...num, width: 66, formatter: c => short(c.getValue())},
    {title: 'params', field: 'params', ...num, width: 66, formatter: c => short(c.getValue())},
    {title: 'size KB', field: 'kb', ...num, visible: false},
    {title: 'rounds', field: 'rounds', ...num, width: 56},
    {title: 'p90 ms', field: 'p90', ...num, visible: false},
    {title: 'std ms', field: 'std', ...num, visible: false},
    {title: 'runs', field: 'runs', ...num, visible: false},
    {title: 'mJ / inference', field: 'mj', ...num, visible: any('mj')},
    {title: 'load mW', field: 'mw', ...num, visible: false},
    {title: 'flags', field: 'flags', width: 100, formatter: c => flagHtml(c.getValue())},
    {title: 'stage', field: 'stage', width: 80, visible: false},
  ];
  const table = new Tabulator('#models', {
    data: rows, index: 'i', columns: columns, maxHeight: '70vh', layout: 'fitDataStretch',
    columnDefaults: {headerWordWrap: true},
    renderVertical: 'virtual', columnHeaderVertAlign: 'bottom', placeholder: 'no model matches the filter',
    // Every row is one line (cells do not wrap): a fixed height spares measuring each row's cells
    // whenever rows are drawn again (a sort, a filter), most of what a sort cost.
    rowHeight: ROW_HEIGHT,
  });

  const $ = id => document.getElementById(id);
  const fill = (id, values) => values.forEach(v => $(id).insertAdjacentHTML('beforeend',
    `<option value="${esc(v)}">${esc(v)}</option>`));
  fill('filter-status', distinct('status')); fill('filter-family', distinct('family'));
  fill('filter-device', distinct('device'));
  $('total').textContent = N;
  const applyFilter = () => {
    const words = $('filter-text').value.toLowerCase().split(/\s+/).filter(Boolean);
    const st = $('filter-status').value, fam = $('filter-family').value, dev = $('filter-device').value;
    if (!words.length && !st && !fam && !dev) { table.clearFilter(); return; }
    table.setFilter(r => (!st || r.status === st) && (!fam || r.family === fam) && (!dev || r.device === dev) &&
      words.every(w => r.hay.includes(w)));
  };
  ['filter-text', 'filter-status', 'filter-family', 'filter-device'].forEach(id =>
    $(id).addEventListener(id === 'filter-text' ? 'input' : 'change', applyFilter));
  table.on('dataFiltered', (filters, shown) => { $('shown').textContent = shown.length; });

  $('flag-legend').innerHTML = 'Flags: ' + Object.keys(FLAGS).map(c =>
    `<span class="item">${flagHtml(c)} ${esc(FLAGS[c][1])}</span>`).join('');

  // --- the column chooser ----------------------------------------------------------------------------------
  table.on('tableBuilt', () => {
    $('shown').textContent = N;
    table.getColumns().forEach(col => {
      const def = col.getDefinition();
      if (def.frozen) return;
      const label = document.createElement('label');
      label.innerHTML = `<input type="checkbox" ${col.isVisible() ? 'checked' : ''}> ${esc(def.title)}`;
      label.firstChild.addEventListener('change', ev => { ev.target.checked ? col.show() : col.hide(); });
      $('column-list').appendChild(label);
    });
    window.nnliteReady = performance.now();  // the table answers clicks from here on
  });

  // --- details of a row --------------------------------------------------------------------------------------
  const kv = (title, pairs) => {
    const body = pairs.filter(p => p[1] != null && p[1] !== '').map(p =>
      `<tr><td>${esc(p[0])}</td><td>${esc(p[1])}</td></tr>`).join('');
    return body ? `<div><b>${esc(title)}</b><table class="kv">${body}</table></div>` : '';
  };
  const withMs = v => v == null ? null : v + ' ms';
  let detailCharts = [];
  const showDetail = r => {
    const d = D.details[r.i] || {};
    const parts = [];
    if (r.cause) parts.push(`<div class="err wide"><b>${esc(r.stage || (r.status === 'failed' ? 'failed' :
      'why unstable'))}</b>: ${esc(r.cause)}</div>`);
    if (r.flags) parts.push(`<div class="wide">${r.flags.split(' ').map(c => flagHtml(c) + ' ' +
      esc(FLAGS[c][1])).join('<br>')}</div>`);
    const rounds = (d.rounds || []).map((m, k) => ['round ' + (k + 1), m + ' ms']);
    parts.push(kv('Latency', [['median', withMs(r.median)], ['95% interval (within session)', r.low == null ? null :
      `${r.low}–${r.high} ms`], ['between sessions', r.s_low == null ? null : `${r.s_low}–${r.s_high} ms`],
      ['ms / GFLOP', r.ms_gflop], ...rounds]));
    if (d.stats) parts.push(kv('Benchmark', [['timed runs', r.runs], ['mean', withMs(d.stats[0])],
      ['p90', withMs(r.p90)], ['p99', withMs(d.stats[1])], ['std', withMs(r.std)], ['min', withMs(d.stats[2])],
      ['max', withMs(d.stats[3])], ['init', withMs((d.load || [])[0])], ['first inference', withMs((d.load || [])[1])]]));
    parts.push(kv('Model', [['family', r.family], ['task', r.task], ['params', r.params == null ? null :
      r.params.toLocaleString('en')], ['FLOPs', r.flops == null ? null : short(r.flops)],
      ['artifact', r.kb == null ? null : r.kb + ' KB'], ['device', r.device], ['runtime', r.runtime],
      ['backend', r.backend], ['precision', r.precision]]));
    if (d.conv) parts.push(kv('Conversion', d.conv.map(p => [S[p[0]], S[p[1]]])));
    if (d.energy) { const e = d.energy; parts.push(kv('Energy', [['per inference', e[0] == null ? null : e[0] + ' mJ'],
      ['mean power, load', e[1] == null ? null : e[1] + ' mW'], ['mean power, idle', e[2] == null ? null : e[2] + ' mW'],
      ['source', S[e[3]]], ['counter', S[e[4]]], ['why none', S[e[5]]]])); }
    if (d.hist) parts.push('<div class="plot" id="detail-hist"></div><div class="plot" id="detail-timeline"></div>');
    if (d.ops) {
      const [count, ops, invalid] = d.ops;
      const body = ops.map(o => `<tr><td>${o[0] == null ? '' : o[0]}</td><td>${esc(S[o[1]])}</td><td>${esc(S[o[2]])}` +
        `</td><td class="num">${o[3] == null ? 'untimed' : o[3]}</td><td class="num">${o[4] == null ? '' : o[4] + '%'}` +
        '</td></tr>').join('');
      parts.push(`<div class="ops wide">${invalid != null ? `<div class="err"><b>per-op profile invalid</b>: ` +
        `${esc(S[invalid])}</div>` : ''}<b>Top ops</b> <span class="muted">(${count} profiled)</span><table><tr>` +
        `<th>#</th><th>op</th><th>shape</th><th class="num">avg µs</th><th class="num">share</th></tr>${body}</table></div>`);
    }
    const box = $('detail');
    detailCharts.forEach(c => c.dispose()); detailCharts = [];
    box.innerHTML = `<span class="close" title="close">✕</span><h3>${esc(r.model)} · ${esc(r.group)}</h3>` +
      `<div class="detail-grid">${parts.join('')}</div>`;
    box.hidden = false;
    box.querySelector('.close').addEventListener('click', () => { box.hidden = true; });
    if (d.hist) {
      const [lo, hi, above, counts] = d.hist, w = (hi - lo) / counts.length;
      detailCharts.push(chart($('detail-hist'), {
        title: {text: `latency histogram${above ? ` (${above} above p99 not drawn)` : ''}`, textStyle: {fontSize: 13}},
        grid: {left: 56, right: 16, top: 36, bottom: 40}, tooltip: {trigger: 'axis'},
        xAxis: {type: 'category', name: 'ms', nameLocation: 'middle', nameGap: 26,
                data: counts.map((_, k) => +(lo + (k + 0.5) * w).toPrecision(4))},
        yAxis: {type: 'value', name: 'samples', nameLocation: 'middle', nameGap: 40},
        series: [{type: 'bar', data: counts, barCategoryGap: '5%'}]}));
      const [bucket, count, points] = d.timeline;
      detailCharts.push(chart($('detail-timeline'), {
        title: {text: `samples in run order (n=${count}; median of each ${bucket})`, textStyle: {fontSize: 13}},
        grid: {left: 56, right: 16, top: 36, bottom: 40}, tooltip: {trigger: 'axis'},
        xAxis: {type: 'value', name: 'sample', nameLocation: 'middle', nameGap: 26, min: 0},
        yAxis: {type: 'value', name: 'ms', scale: true, nameLocation: 'middle', nameGap: 40},
        series: [{type: 'line', showSymbol: false,
                  data: points.map((v, k) => [k * bucket, +(v * r.median / 1000).toPrecision(4)])}]}));
    }
  };
  table.on('rowClick', (e, row) => {
    table.deselectRow(); row.select(); showDetail(row.getData());
  });

  // --- plots -----------------------------------------------------------------------------------------------------
  function chart(el, option) {
    const c = echarts.init(el, null, {renderer: 'canvas'});
    c.setOption(Object.assign({animation: false}, option));
    return c;
  }
  const why = (el, title, text) => { el.innerHTML = `<div class="why"><div><b>${esc(title)}</b>${esc(text)}</div></div>`; };
  function seriesBy(list, key, point) {
    const counts = {};
    list.forEach(r => { const k = key(r); counts[k] = (counts[k] || 0) + 1; });
    const top = Object.keys(counts).sort((a, b) => counts[b] - counts[a]).slice(0, 9);
    const groups = {};
    list.forEach(r => { const k = top.includes(key(r)) ? key(r) : 'other'; (groups[k] = groups[k] || []).push(point(r)); });
    return Object.keys(groups).map((k, n) => ({name: k, type: 'scatter', symbolSize: 5, large: true, largeThreshold: 2000,
      itemStyle: {color: PALETTE[n % PALETTE.length], opacity: 0.75}, data: groups[k]}));
  }
  const unitTip = extra => p => { const r = rows[p.data[2]]; return `<b>${esc(r.model)}</b><br>${esc(r.group)}<br>` +
    `median ${r.median} ms<br>${extra(r)}`; };
  function scatter(el, title, xName, yName, series, tip, diagonal) {
    if (diagonal) {
      let lo = Infinity, hi = 0;
      series.forEach(s => s.data.forEach(p => { lo = Math.min(lo, p[0], p[1]); hi = Math.max(hi, p[0], p[1]); }));
      series.push({type: 'line', name: 'y = x', data: [[lo, lo], [hi, hi]], showSymbol: false, silent: true,
                   lineStyle: {type: 'dashed', color: '#8a949e', width: 1}, tooltip: {show: false}});
    }
    return chart(el, {
      title: {text: title, textStyle: {fontSize: 13}, left: 8},
      legend: {type: 'scroll', bottom: 0, data: series.filter(s => s.name !== 'y = x').map(s => s.name)},
      grid: {left: 64, right: 24, top: 40, bottom: 64},
      tooltip: {trigger: 'item', formatter: tip},
      xAxis: {type: 'log', name: xName, nameLocation: 'middle', nameGap: 26, axisLabel: {formatter: short}},
      yAxis: {type: 'log', name: yName, nameLocation: 'middle', nameGap: 44, axisLabel: {formatter: short}},
      series: series});
  }
  const done = rows.filter(r => r.median != null);
  // colour by task when the run mixes tasks, otherwise by family
  const [by, key] = distinct('task').length > 1 ? ['task', r => r.task || 'unknown'] : ['family', r => r.family];
  const versus = (field, label, extra, emptyWhy) => el => {
    const list = done.filter(r => r[field] != null && r[field] > 0);
    if (!list.length) return why(el, `median latency vs ${label}`, emptyWhy);
    return scatter(el, `median latency vs ${label} (${list.length} units; colour: ${by})`, label, 'median ms',
                   seriesBy(list, key, r => [r[field], r.median, r.i]), unitTip(extra));
  };
  const PLOTS = {
    'plot-latency-vs-params': versus('params', 'parameters', r => `${short(r.params)} params`,
      done.length ? 'no unit has a parameter count' : 'no unit has a median latency: none was benchmarked'),
    'plot-latency-vs-size': versus('kb', 'artifact KB', r => `${r.kb} KB artifact`,
      done.length ? 'no unit has an artifact size' : 'no unit has a median latency: none was benchmarked'),
    'plot-latency-vs-flops': versus('flops', 'FLOPs', r => `${short(r.flops)} FLOPs, ${r.ms_gflop} ms/GFLOP`,
      done.length ? 'no unit has a FLOP count (counted at conversion for models that export)' :
        'no unit has a median latency: none was benchmarked'),
    'plot-latency-distribution': el => {
      if (!done.length) return why(el, 'median latency per device · precision', 'no unit has a median latency');
      const logs = done.map(r => Math.log10(r.median)), lo = Math.min(...logs), hi = Math.max(...logs);
      const bins = 40, w = (hi - lo) / bins || 1, groups = {};
      done.forEach(r => { const g = groups[r.group] = groups[r.group] || new Array(bins).fill(0);
        g[Math.min(bins - 1, Math.floor((Math.log10(r.median) - lo) / w))] += 1; });
      return chart(el, {title: {text: 'units per latency bin, per device · precision (log-spaced bins)',
        textStyle: {fontSize: 13}, left: 8}, legend: {type: 'scroll', bottom: 0},
        grid: {left: 56, right: 24, top: 40, bottom: 64}, tooltip: {trigger: 'axis'},
        xAxis: {type: 'log', name: 'median ms', nameLocation: 'middle', nameGap: 26, axisLabel: {formatter: short}},
        yAxis: {type: 'value', name: 'units', nameLocation: 'middle', nameGap: 36},
        series: Object.keys(groups).map((g, n) => ({name: g, type: 'line', step: 'middle', showSymbol: false,
          itemStyle: {color: PALETTE[n % PALETTE.length]},
          data: groups[g].map((c, k) => [+Math.pow(10, lo + (k + 0.5) * w).toPrecision(4), c])}))});
    },
  };
  D.pairs.forEach((p, n) => {
    const id = 'plot-paired-' + n;
    $('paired-plots').insertAdjacentHTML('beforeend', `<div class="plot" id="${id}" data-plot="paired"></div>`);
    PLOTS[id] = el => scatter(el, `same ${p.pairs.length} models: ${p.y} vs ${p.x}`, p.x + ' median ms',
      p.y + ' median ms', seriesBy(p.pairs.map(ab => [rows[ab[0]], rows[ab[1]]]), ab => key(ab[0]),
        ab => [ab[0].median, ab[1].median, ab[0].i]),
      p2 => `<b>${esc(rows[p2.data[2]].model)}</b><br>${esc(p.x)}: ${p2.data[0]} ms<br>${esc(p.y)}: ${p2.data[1]} ms`,
      true);
  });
  const refs = Object.keys(D.reference);
  if (!refs.length) $('drift-block').hidden = true;
  refs.forEach((serial, n) => {
    const id = 'plot-reference-' + n, pts = D.reference[serial];
    $('drift').insertAdjacentHTML('beforeend', `<div class="plot" id="${id}"></div>`);
    PLOTS[id] = el => {
      const title = `reference model on ${serial}`;
      if (pts.length < 2) return why(el, title, pts.length ? `one reference figure (${pts[0][1]} ms): a drift needs ` +
        'two or more' : 'no reference figure');
      const t0 = pts[0][0], v = pts.map(p => p[1]);
      return chart(el, {title: {text: `${title}: ${pts.length} figures over ${((pts[pts.length - 1][0] - t0) / 60)
        .toFixed(1)} min, max/min ${(Math.max(...v) / Math.min(...v)).toFixed(3)}`, textStyle: {fontSize: 13}, left: 8},
        grid: {left: 56, right: 24, top: 40, bottom: 40}, tooltip: {trigger: 'axis'},
        xAxis: {type: 'value', name: 'minutes into the run', nameLocation: 'middle', nameGap: 26},
        yAxis: {type: 'value', name: 'ms', scale: true},
        series: [{type: 'line', showSymbol: pts.length < 200, data: pts.map(p => [+((p[0] - t0) / 60).toFixed(3), p[1]])}]});
    };
  });
  const energyRows = done.filter(r => r.mj != null);
  if (!any('mj') && !D.details.some(d => d.energy)) $('energy-block').hidden = true;
  distinct('device').filter(dev => energyRows.some(r => r.device === dev)).forEach((dev, n) => {
    const id = 'plot-energy-' + n;
    $('energy-plots').insertAdjacentHTML('beforeend', `<div class="plot" id="${id}" data-plot="energy-vs-latency"></div>`);
    const list = energyRows.filter(r => r.device === dev);
    PLOTS[id] = el => scatter(el, `energy vs latency on ${dev}`, 'median ms', 'mJ per inference',
      seriesBy(list, key, r => [r.median, r.mj, r.i]), unitTip(r => `${r.mj} mJ, ${r.mw} mW`));
  });
  if ($('energy-block') && !$('energy-block').hidden && !energyRows.length)
    $('energy-plots').innerHTML = '<p>No report has a valid energy figure; each row\'s details say why.</p>';

  // --- runtimes (a run in more than one runtime) ---------------------------------------------------------------
  const RT = D.runtimes;
  if (RT) {
    const rc = RT.columns, others = Object.keys(RT.ratio_titles), rtRows = [];
    for (let i = 0; i < rc.model.length; i++) {
      const r = {model: rc.model[i], device: S[rc.device[i]], precision: S[rc.precision[i]]};
      RT.runtimes.forEach(rt => {
        r['conv_' + rt] = S[rc.conversion[rt][i]]; r['med_' + rt] = rc.median[rt][i];
        r['note_' + rt] = rc.note[rt][i] == null ? '' : S[rc.note[rt][i]];
      });
      others.forEach(rt => { r['ratio_' + rt] = rc.ratio[rt][i]; });
      rtRows.push(r);
    }
    const rtColumns = [{title: 'model', field: 'model', frozen: true, width: 180, tooltip: true},
      {title: 'device', field: 'device', width: 110, tooltip: true}, {title: 'precision', field: 'precision', width: 74}];
    RT.runtimes.forEach(rt => rtColumns.push(
      {title: `${rt} conversion`, field: 'conv_' + rt, width: 190, tooltip: true, formatter: c =>
        c.getValue().startsWith('ok') ? esc(c.getValue()) : `<span class="cause">${esc(c.getValue())}</span>`},
      {title: `${rt} median ms`, field: 'med_' + rt, ...num, width: 90,
       formatter: c => c.getValue() == null ? esc(c.getData()['note_' + rt]) : c.getValue()}));
    others.forEach(rt => rtColumns.push({title: RT.ratio_titles[rt], field: 'ratio_' + rt, ...num, width: 100}));
    new Tabulator('#runtime-table', {data: rtRows, columns: rtColumns, maxHeight: '60vh', layout: 'fitDataStretch',
      renderVertical: 'virtual', columnDefaults: {headerWordWrap: true}});
    PLOTS['plot-runtime-scatter'] = el => {
      const points = [];
      rtRows.forEach(r => others.forEach(rt => { if (r['ratio_' + rt] != null)
        points.push({r: r, rt: rt, x: r['med_' + RT.baseline], y: r['med_' + rt], j: points.length}); }));
      const title = `${others.join(', ')} vs ${RT.baseline}: median per model (below the diagonal: faster than ` +
        `${RT.baseline})`;
      if (!points.length) return why(el, title, 'no model has a median in two runtimes on one device and precision');
      return scatter(el, title, RT.baseline + ' median ms', others.join(', ') + ' median ms',
        seriesBy(points, p => `${p.r.device} · ${p.r.precision}${others.length > 1 ? ' · ' + p.rt : ''}`,
                 p => [p.x, p.y, p.j]),
        p => { const q = points[p.data[2]]; return `<b>${esc(q.r.model)}</b><br>${esc(q.r.device)} (${esc(q.r.precision)})` +
          `<br>${esc(RT.baseline)} ${q.x} ms, ${esc(q.rt)} ${q.y} ms (${q.r['ratio_' + q.rt]}x)`; }, true);
    };
  }

  const charts = [];
  const observer = new IntersectionObserver(entries => entries.forEach(en => {
    if (!en.isIntersecting || en.target.dataset.drawn) return;
    en.target.dataset.drawn = '1';
    const c = PLOTS[en.target.id](en.target);
    if (c) charts.push(c);
    observer.unobserve(en.target);
  }), {rootMargin: '200px'});
  Object.keys(PLOTS).forEach(id => observer.observe($(id)));
  // Once the table is up, the plots not yet in view are drawn one per idle moment.
  const later = () => { const el = Object.keys(PLOTS).map($).find(e => !e.dataset.drawn);
    if (!el) return; el.dataset.drawn = '1'; observer.unobserve(el); const c = PLOTS[el.id](el); if (c) charts.push(c);
    requestIdleCallback(later); };
  table.on('tableBuilt', () => requestIdleCallback(later));
  window.addEventListener('resize', () => charts.concat(detailCharts).forEach(c => c.resize()));

  // --- per family and per task ------------------------------------------------------------------------------------
  const summaryTable = (el, list, name) => {
    const groups = new Set(list.map(r => r.group)).size;
    return new Tabulator(el, {data: list, layout: 'fitColumns', maxHeight: '420px', renderVertical: 'virtual',
      initialSort: [{column: 'ms_gflop', dir: 'asc'}],
      columns: [{title: name, field: name, minWidth: 160}, {title: 'device · precision', field: 'group', visible: groups > 1},
        {title: 'units', field: 'units', ...num}, {title: 'done', field: 'done', ...num},
        {title: 'failed', field: 'failed', ...num},
        {title: 'failure causes', field: 'causes', minWidth: 180, tooltip: true,
          formatter: c => c.getValue() ? `<span class="cause">${esc(c.getValue())}</span>` : ''},
        {title: 'median ms', field: 'median', ...num},
        {title: 'median ms / GFLOP', field: 'ms_gflop', ...num},
        {title: 'median params', field: 'params', ...num, formatter: c => short(c.getValue())},
        {title: 'median FLOPs', field: 'flops', ...num, formatter: c => short(c.getValue())}]});
  };
  const families = summaryTable('#families', D.families, 'family');
  families.on('rowClick', (e, row) => { $('filter-family').value = row.getData().family; applyFilter();
    $('models').scrollIntoView(); });
  if (D.tasks.length) summaryTable('#tasks', D.tasks, 'task'); else $('tasks-block').hidden = true;
})();
