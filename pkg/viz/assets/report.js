// hopctl report: draws the model pkg/viz builds (see its doc) on a canvas.
// Each expanded box is laid out on its own by dagre (a layered, Sugiyama-
// style layout) with its items — nodes and the boxes inside it — as
// vertices; a box's layout is cached until something inside it is
// expanded or collapsed, so a click re-lays out only the boxes on the way
// to the root, each with at most MaxChildren items.
"use strict";
(function () {
  // Attempts to load anything (the page's policy forbids every request).
  let cspViolations = 0;
  document.addEventListener("securitypolicyviolation", () => { cspViolations++; });
  const DOC = JSON.parse(document.getElementById("hopctl-data").textContent);
  const canvas = document.getElementById("graph");
  const ctx = canvas.getContext("2d");
  const tooltip = document.getElementById("tooltip");
  const statusEl = document.getElementById("status");
  const FONT_PX = 12;
  const MIN_LABEL_PX = 9; // the smallest label the first view shows (CSS px)
  const FONT = FONT_PX + 'px "DejaVu Sans Mono", monospace';
  const NODE_H = 22, BOX_H = 28, HEADER = 20, PAD = 10, MAX_CHARS = 64, FANOUT = 6;
  const PALETTE = ["#7e57c2", "#26a69a", "#ec407a", "#8d6e63", "#5c6bc0", "#9ccc65", "#ffa726", "#29b6f6", "#ab47bc", "#66bb6a"];
  const F_PH = 1, F_OUT = 2, F_ATTR = 4, F_MUT = 8, F_WRITER = 16, F_FW = 32, F_BW = 64, F_SAVED = 128, F_FINDING = 256;
  ctx.font = FONT;
  const CW = ctx.measureText("M").width;

  let F = null; // the file shown, with derived indexes
  const stats = { calls: 0, maxMs: 0, maxBox: -1, maxSize: null }; // dagre calls
  const view = { x: 0, y: 0, k: 1 };
  const overlay = { mutated: true, alias: true, path: true, joint: true };
  let activeFinding = -1;
  let selected = null; // {t:'n'|'g', id}
  let drawList = null; // {boxes, nodes, edges, bounds}
  let highlighted = { nodes: new Set(), groups: new Set(), chain: [] };

  function prepare(file) {
    const f = { src: file, N: file.nodes.name.length, G: file.groups.parent.length };
    const gp = file.groups.parent, ng = file.nodes.group;
    f.childNodes = Array.from({ length: f.G }, () => []);
    f.childGroups = Array.from({ length: f.G }, () => []);
    for (let k = 0; k < f.N; k++) f.childNodes[ng[k]].push(k);
    f.first = new Int32Array(f.G).fill(-1);
    for (let k = 0; k < f.N; k++) {
      for (let x = ng[k]; x >= 0; x = gp[x]) {
        if (f.first[x] >= 0) break;
        f.first[x] = k;
      }
    }
    f.count = new Int32Array(f.G);
    for (let k = 0; k < f.N; k++) for (let x = ng[k]; x >= 0; x = gp[x]) f.count[x]++;
    for (let x = 0; x < f.G; x++) if (gp[x] >= 0) f.childGroups[gp[x]].push(x);
    f.depth = new Int32Array(f.G);
    const depthOf = (x) => { let d = 0; for (let y = gp[x]; y >= 0; y = gp[y]) d++; return d; };
    for (let x = 0; x < f.G; x++) f.depth[x] = depthOf(x);
    f.tops = [];
    for (let x = 0; x < f.G; x++) if (gp[x] < 0) f.tops.push(x);
    // Item edges of each box: every def-use edge belongs to the box where
    // its two ends part, as an edge between that box's two items.
    // Items are node k as k, box x as -(x+1).
    f.itemEdges = Array.from({ length: f.G }, () => new Map());
    const E = file.edges;
    for (let e = 0; e < E.length; e += 2) {
      const u = E[e], v = E[e + 1];
      let a = ng[u], b = ng[v];
      let ia = u, ib = v;
      if (a !== b) {
        while (f.depth[a] > f.depth[b]) { ia = -(a + 1); a = gp[a]; }
        while (f.depth[b] > f.depth[a]) { ib = -(b + 1); b = gp[b]; }
        while (a !== b) { ia = -(a + 1); a = gp[a]; ib = -(b + 1); b = gp[b]; }
      }
      if (a < 0 || ia === ib) continue;
      f.itemEdges[a].set(ia + "," + ib, [ia, ib]);
    }
    // What each box holds, for marks on collapsed boxes.
    f.boxFlags = new Int32Array(f.G);
    f.boxAlias = new Uint8Array(f.G);
    for (let k = 0; k < f.N; k++) {
      const fl = file.nodes.flags[k], al = file.nodes.alias[k] >= 0;
      if (!fl && !al) continue;
      for (let x = ng[k]; x >= 0; x = gp[x]) { f.boxFlags[x] |= fl; if (al) f.boxAlias[x] = 1; }
    }
    f.expanded = new Uint8Array(f.G);
    f.cache = new Array(f.G).fill(null);
    f.labelW = new Float32Array(f.N);
    for (let k = 0; k < f.N; k++) f.labelW[k] = Math.min(file.nodes.label[k].length, MAX_CHARS) * CW + 14;
    return f;
  }

  function defaultExpansion(f) {
    // Breadth first from the top boxes while at most ~120 items show.
    f.expanded.fill(0);
    f.expandOrder = []; // the boxes opened beyond the tops, in order
    let visible = 0;
    const queue = [];
    for (const t of f.tops) { f.expanded[t] = 1; visible += f.childNodes[t].length + f.childGroups[t].length; queue.push(...f.childGroups[t]); }
    while (queue.length) {
      const x = queue.shift();
      if (f.src.groups.kind[x] === "inputs") continue;
      const add = f.childNodes[x].length + f.childGroups[x].length - 1;
      if (visible + add > 120) continue;
      f.expanded[x] = 1;
      f.expandOrder.push(x);
      visible += add;
      queue.push(...f.childGroups[x]);
    }
    f.cache.fill(null);
  }

  function invalidate(x) { for (let y = x; y >= 0; y = F.src.groups.parent[y]) F.cache[y] = null; }

  function setExpanded(x, on) {
    if (!!F.expanded[x] === on) return;
    F.expanded[x] = on ? 1 : 0;
    invalidate(x);
  }

  function groupTitle(x) {
    const g = F.src.groups;
    const kind = g.kind[x];
    let t = g.label[x];
    if (kind === "call") t = F.src.nodes.label[g.node[x]];
    return t;
  }

  function collapsedSize(x) {
    const t = groupTitle(x);
    const w = Math.min(t.length + 12, MAX_CHARS + 12) * CW + 60;
    return { w, h: BOX_H };
  }

  // layout(x): the layout of expanded box x in its own coordinates.
  function layout(x) {
    if (F.cache[x]) return F.cache[x];
    const items = [];
    for (const k of F.childNodes[x]) items.push(k);
    for (const c of F.childGroups[x]) items.push(-(c + 1));
    const g = new dagre.graphlib.Graph({ multigraph: false });
    g.setGraph({ rankdir: "TB", nodesep: 18, ranksep: 26, marginx: 0, marginy: 0 });
    g.setDefaultEdgeLabel(() => ({}));
    const sizes = new Map();
    for (const it of items) {
      let w, h;
      if (it >= 0) { w = F.labelW[it]; h = NODE_H; }
      else {
        const c = -it - 1;
        if (F.expanded[c]) { const l = layout(c); w = l.w + 2 * PAD; h = l.h + HEADER + 2 * PAD; }
        else ({ w, h } = collapsedSize(c));
      }
      w = Math.max(w, 40);
      sizes.set(it, { w, h });
      g.setNode(String(it), { width: w, height: h });
    }
    // Edges from an item with many users (a box of inputs, a weight) are
    // laid out only to its first few: its long edges to every layer would
    // cost dagre a dummy vertex per layer crossed (a 48-item box took a
    // second). The others are drawn straight.
    const outDeg = new Map();
    for (const [a] of F.itemEdges[x].values()) outDeg.set(a, (outDeg.get(a) || 0) + 1);
    const free = [];
    const laidOut = new Map();
    for (const [a, b] of F.itemEdges[x].values()) {
      const n = laidOut.get(a) || 0;
      if (outDeg.get(a) > FANOUT && n >= 2) { free.push([a, b]); continue; }
      laidOut.set(a, n + 1);
      g.setEdge(String(a), String(b));
    }
    // A call box: the call node above the subgraphs it calls (edges for
    // the layout only, not drawn).
    const hidden = new Set();
    const callNode = F.src.groups.node[x];
    if (F.src.groups.kind[x] === "call" && callNode >= 0 && sizes.has(callNode)) {
      for (const c of F.childGroups[x]) {
        const key = String(-(c + 1));
        if (!g.hasEdge(String(callNode), key)) { g.setEdge(String(callNode), key); hidden.add(callNode + "," + key); }
      }
    }
    const tl = performance.now();
    dagre.layout(g);
    const ms = performance.now() - tl;
    stats.calls++;
    if (ms > stats.maxMs) stats.maxMs = ms, stats.maxBox = x, stats.maxSize = [g.nodeCount(), g.edgeCount()];
    const out = { items: [], edges: [], w: Math.max(g.graph().width || 0, groupTitle(x).length * CW + 20), h: g.graph().height || 0 };
    for (const it of items) {
      const n = g.node(String(it));
      const s = sizes.get(it);
      out.items.push({ it, x: n.x - s.w / 2, y: n.y - s.h / 2, w: s.w, h: s.h });
    }
    for (const e of g.edges()) {
      if (hidden.has(e.v + "," + e.w)) continue;
      const pts = g.edge(e).points || [];
      out.edges.push({ a: +e.v, b: +e.w, pts });
    }
    for (const [a, b] of free) {
      const p = g.node(String(a)), q = g.node(String(b));
      out.edges.push({ a, b, pts: [{ x: p.x, y: p.y + p.height / 2 }, { x: q.x, y: q.y - q.height / 2 }] });
    }
    F.cache[x] = out;
    return out;
  }

  // place builds the absolute draw list from the cached layouts.
  function place() {
    const boxes = [], nodes = [], edges = [];
    const where = new Map(); // item -> rect, for highlights
    let ox = 0;
    const walk = (x, X, Y, depth) => {
      const l = layout(x);
      for (const e of l.edges) edges.push({ a: e.a, b: e.b, pts: e.pts.map((p) => ({ x: p.x + X, y: p.y + Y })) });
      for (const r of l.items) {
        const rect = { x: r.x + X, y: r.y + Y, w: r.w, h: r.h, it: r.it, depth };
        where.set(r.it, rect);
        if (r.it >= 0) nodes.push(rect);
        else {
          const c = -r.it - 1;
          rect.expanded = !!F.expanded[c];
          boxes.push(rect);
          if (rect.expanded) walk(c, rect.x + PAD, rect.y + HEADER + PAD, depth + 1);
        }
      }
    };
    for (const t of F.tops) {
      const l = layout(t);
      const rect = { x: ox, y: 0, w: l.w + 2 * PAD, h: l.h + HEADER + 2 * PAD, it: -(t + 1), depth: 0, expanded: true };
      boxes.push(rect);
      where.set(rect.it, rect);
      walk(t, ox + PAD, HEADER + PAD, 1);
      ox += rect.w + 40;
    }
    let minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (const r of boxes.concat(nodes)) { minx = Math.min(minx, r.x); miny = Math.min(miny, r.y); maxx = Math.max(maxx, r.x + r.w); maxy = Math.max(maxy, r.y + r.h); }
    drawList = { boxes, nodes, edges, where, bounds: { minx, miny, maxx, maxy } };
  }

  // rep(item): the visible item standing for item (itself, or the
  // outermost collapsed box around it).
  function rep(item) {
    const gp = F.src.groups.parent;
    let best = item;
    let x = item >= 0 ? F.src.nodes.group[item] : gp[-item - 1];
    for (; x >= 0; x = gp[x]) if (!F.expanded[x]) best = -(x + 1);
    return best;
  }

  function revealItem(item) {
    const gp = F.src.groups.parent;
    let x = item >= 0 ? F.src.nodes.group[item] : gp[-item - 1];
    for (; x >= 0; x = gp[x]) setExpanded(x, true);
  }

  // --- drawing ---------------------------------------------------------
  function nodeFill(k) {
    const fl = F.src.nodes.flags[k];
    if (overlay.mutated && (fl & F_MUT)) return "#ffb74d";
    if (overlay.joint && F.src.joint) {
      if (fl & F_BW) return "#c8e6c9";
      if (fl & F_FW) return "#bbdefb";
    }
    if (fl & F_PH) return "#e3f2fd";
    if (fl & F_OUT) return "#eceff1";
    if (fl & F_ATTR) return "#f3e5f5";
    return "#ffffff";
  }

  const boxFill = { graph: "#f4f6fb", call: "#fff8e1", module: "#eef7ee", chunk: "#f2f2f2", inputs: "#eef5fc" };
  const boxStroke = { graph: "#7986a8", call: "#c49000", module: "#5a9a5a", chunk: "#9e9e9e", inputs: "#5b8fc7" };

  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const r = canvas.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    draw();
  }

  function draw() {
    if (!drawList) return;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr * view.k, 0, 0, dpr * view.k, dpr * view.x, dpr * view.y);
    const vw = canvas.width / dpr, vh = canvas.height / dpr;
    const x0 = -view.x / view.k, y0 = -view.y / view.k, x1 = x0 + vw / view.k, y1 = y0 + vh / view.k;
    const inView = (r) => r.x < x1 && r.x + r.w > x0 && r.y < y1 && r.y + r.h > y0;
    const text = view.k > 0.3;
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const hiN = highlighted.nodes, hiG = highlighted.groups;
    for (const b of drawList.boxes) {
      if (!inView(b)) continue;
      const c = -b.it - 1, kind = F.src.groups.kind[c];
      ctx.fillStyle = b.expanded ? boxFill[kind] : "#fffdf5";
      ctx.strokeStyle = boxStroke[kind];
      ctx.lineWidth = 1 / Math.max(view.k, 0.2);
      if (!b.expanded) { ctx.fillStyle = { call: "#ffecb3", module: "#dcedc8", graph: "#e1e7f5", inputs: "#d6e6f7" }[kind] || "#e6e6e6"; }
      roundRect(b.x, b.y, b.w, b.h, 5);
      ctx.fill();
      if (kind === "chunk") ctx.setLineDash([4, 3]);
      ctx.stroke();
      ctx.setLineDash([]);
      if (overlay.path && hiG.has(c)) {
        ctx.strokeStyle = "#d50000"; ctx.lineWidth = 3 / Math.max(view.k, 0.3);
        roundRect(b.x - 2, b.y - 2, b.w + 4, b.h + 4, 6); ctx.stroke();
      }
      if (!b.expanded) {
        // Marks for what a collapsed box holds.
        const marks = [];
        const bf = F.boxFlags[c];
        if (overlay.mutated && (bf & F_MUT)) marks.push("#ff9800");
        if (overlay.alias && F.boxAlias[c]) marks.push(PALETTE[0]);
        if (overlay.joint && F.src.joint && (bf & F_SAVED)) marks.push("#6a1b9a");
        if (bf & F_FINDING) marks.push("#d50000");
        marks.forEach((col, i) => { ctx.fillStyle = col; ctx.fillRect(b.x + b.w - 12 - i * 11, b.y + 4, 8, 8); });
      }
      if (text) {
        ctx.fillStyle = "#222";
        const title = (b.expanded ? "▾ " : "▸ ") + clip(groupTitle(c), MAX_CHARS) + (b.expanded ? "" : "  (" + F.count[c] + ")");
        ctx.fillText(title, b.x + 6, b.y + (b.expanded ? HEADER / 2 + 2 : b.h / 2));
      }
    }
    // edges
    ctx.lineWidth = 1 / Math.max(view.k, 0.5);
    ctx.strokeStyle = "#8a93a6";
    ctx.beginPath();
    for (const e of drawList.edges) {
      const p = e.pts;
      if (p.length < 2) continue;
      ctx.moveTo(p[0].x, p[0].y);
      for (let i = 1; i < p.length; i++) ctx.lineTo(p[i].x, p[i].y);
    }
    ctx.stroke();
    ctx.fillStyle = "#8a93a6";
    for (const e of drawList.edges) {
      const p = e.pts;
      if (p.length < 2) continue;
      arrow(p[p.length - 2], p[p.length - 1]);
    }
    // the provenance chain end to end, under the nodes
    if (overlay.path && highlighted.chain.length > 1) {
      // From each item on the path to the next, border to border.
      const rects = [];
      for (const it of highlighted.chain) {
        const r = drawList.where.get(rep(it));
        if (r && rects[rects.length - 1] !== r) rects.push(r);
      }
      const centre = (r) => ({ x: r.x + r.w / 2, y: r.y + Math.min(r.h / 2, 14) });
      ctx.strokeStyle = "rgba(213,0,0,0.75)";
      ctx.fillStyle = "#d50000";
      ctx.lineWidth = 3.5;
      for (let i = 1; i < rects.length; i++) {
        const a = centre(rects[i - 1]), b = centre(rects[i]);
        const p = border(b, a, rects[i - 1]), q = border(a, b, rects[i]);
        ctx.setLineDash([8, 5]);
        ctx.beginPath(); ctx.moveTo(p.x, p.y); ctx.lineTo(q.x, q.y); ctx.stroke();
        ctx.setLineDash([]);
        arrow(p, q, 9);
      }
    }
    // nodes
    for (const r of drawList.nodes) {
      if (!inView(r)) continue;
      const k = r.it, fl = F.src.nodes.flags[k];
      ctx.fillStyle = nodeFill(k);
      roundRect(r.x, r.y, r.w, r.h, 3);
      ctx.fill();
      ctx.lineWidth = 1;
      ctx.strokeStyle = "#56607a";
      if (overlay.joint && F.src.joint && (fl & F_SAVED)) { ctx.lineWidth = 3; ctx.strokeStyle = "#6a1b9a"; }
      ctx.stroke();
      const cls = F.src.nodes.alias[k];
      if (overlay.alias && cls >= 0) {
        ctx.fillStyle = PALETTE[cls % PALETTE.length];
        ctx.fillRect(r.x, r.y, 6, r.h);
      }
      if (overlay.path && hiN.has(k)) {
        ctx.strokeStyle = "#d50000"; ctx.lineWidth = 3;
        roundRect(r.x - 2, r.y - 2, r.w + 4, r.h + 4, 4); ctx.stroke();
      }
      if (selected && selected.t === "n" && selected.id === k) {
        ctx.strokeStyle = "#1565c0"; ctx.lineWidth = 2; ctx.setLineDash([3, 2]);
        roundRect(r.x - 4, r.y - 4, r.w + 8, r.h + 8, 5); ctx.stroke(); ctx.setLineDash([]);
      }
      if (text) {
        ctx.fillStyle = "#111";
        ctx.fillText(clip(F.src.nodes.label[k], MAX_CHARS), r.x + 9, r.y + r.h / 2 + 1);
      }
    }
  }

  // border(from, to, r): where the segment from `from` to `to` (the
  // centre of r) enters r; `to` itself when `from` lies inside r.
  function border(from, to, r) {
    const dx = to.x - from.x, dy = to.y - from.y;
    const x0 = r.x - 3, x1 = r.x + r.w + 3, y0 = r.y - 3, y1 = r.y + Math.min(r.h, 28) + 3;
    if (from.x >= x0 && from.x <= x1 && from.y >= y0 && from.y <= y1) return to;
    // The entry point is the later of the two slab entries.
    let te = 0;
    if (dx > 0) te = Math.max(te, (x0 - from.x) / dx); else if (dx < 0) te = Math.max(te, (x1 - from.x) / dx);
    if (dy > 0) te = Math.max(te, (y0 - from.y) / dy); else if (dy < 0) te = Math.max(te, (y1 - from.y) / dy);
    te = Math.min(Math.max(te, 0), 1);
    return { x: from.x + dx * te, y: from.y + dy * te };
  }

  function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }
  function roundRect(x, y, w, h, r) {
    ctx.beginPath();
    ctx.moveTo(x + r, y); ctx.lineTo(x + w - r, y); ctx.quadraticCurveTo(x + w, y, x + w, y + r);
    ctx.lineTo(x + w, y + h - r); ctx.quadraticCurveTo(x + w, y + h, x + w - r, y + h);
    ctx.lineTo(x + r, y + h); ctx.quadraticCurveTo(x, y + h, x, y + h - r);
    ctx.lineTo(x, y + r); ctx.quadraticCurveTo(x, y, x + r, y); ctx.closePath();
  }
  function arrow(a, b, size) {
    size = size || 6;
    const ang = Math.atan2(b.y - a.y, b.x - a.x);
    ctx.beginPath();
    ctx.moveTo(b.x, b.y);
    ctx.lineTo(b.x - size * Math.cos(ang - 0.4), b.y - size * Math.sin(ang - 0.4));
    ctx.lineTo(b.x - size * Math.cos(ang + 0.4), b.y - size * Math.sin(ang + 0.4));
    ctx.closePath();
    ctx.fill();
  }

  // --- view --------------------------------------------------------------
  function fitTo(b, maxScale) {
    const r = canvas.getBoundingClientRect();
    const w = b.maxx - b.minx + 40, h = b.maxy - b.miny + 40;
    view.k = Math.min(r.width / w, r.height / h, maxScale || 1.5);
    view.x = (r.width - (b.maxx + b.minx) * view.k) / 2;
    view.y = (r.height - (b.maxy + b.miny) * view.k) / 2;
  }

  function relayout() {
    const t0 = performance.now();
    place();
    const ms = performance.now() - t0;
    statusEl.textContent = `${F.src.path}: ${F.N} nodes in ${F.src.graphs.length} graph(s), ${F.G} boxes; showing ${drawList.nodes.length} nodes and ${drawList.boxes.length} boxes (layout ${ms.toFixed(0)} ms)`;
    api.lastLayoutMs = ms;
  }

  function hit(px, py) {
    const x = (px - view.x) / view.k, y = (py - view.y) / view.k;
    for (const r of drawList.nodes) if (x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h) return r;
    let best = null;
    for (const b of drawList.boxes) if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h && (!best || b.depth > best.depth)) best = b;
    if (best && best.expanded && y > best.y + HEADER) return { inside: best };
    return best;
  }

  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false }; });
  window.addEventListener("mousemove", (ev) => {
    if (drag) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; canvas.classList.add("dragging"); }
      view.x = drag.vx + dx; view.y = drag.vy + dy;
      draw();
      return;
    }
    if (ev.target !== canvas) { tooltip.style.display = "none"; return; }
    const r = canvas.getBoundingClientRect();
    const h = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (!h || h.inside) { tooltip.style.display = "none"; return; }
    tooltip.innerHTML = describe(h.it, true);
    tooltip.style.display = "block";
    tooltip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 300) + "px";
    tooltip.style.top = ev.clientY - r.top + 14 + "px";
  });
  window.addEventListener("mouseup", (ev) => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    canvas.classList.remove("dragging");
    if (moved || ev.target !== canvas) return;
    const r = canvas.getBoundingClientRect();
    const h = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (!h || h.inside) return;
    if (h.it < 0) {
      const c = -h.it - 1;
      if (F.src.groups.parent[c] >= 0) { setExpanded(c, !F.expanded[c]); relayout(); }
      select({ t: "g", id: c });
    } else select({ t: "n", id: h.it });
    draw();
  });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const f = Math.exp(-ev.deltaY * 0.0015);
    const k = Math.min(4, Math.max(0.02, view.k * f));
    view.x = px - ((px - view.x) * k) / view.k;
    view.y = py - ((py - view.y) * k) / view.k;
    view.k = k;
    draw();
  }, { passive: false });
  window.addEventListener("resize", resize);

  function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }

  function describe(it, short) {
    const s = F.src;
    if (it < 0) {
      const c = -it - 1;
      return esc(`${s.groups.kind[c]} box: ${groupTitle(c)}\n${F.count[c]} nodes inside` + (s.groups.parent[c] >= 0 ? "\nclick to " + (F.expanded[c] ? "collapse" : "expand") : ""));
    }
    const k = it, fl = s.nodes.flags[k];
    const lines = [s.nodes.label[k], "graph " + (s.graphs[s.nodes.graph[k]].name || "<root>")];
    const tags = [];
    if (fl & F_MUT) tags.push("mutated input");
    if (fl & F_WRITER) tags.push("writes an input (finding)");
    if (fl & F_FINDING) tags.push("finding reported here");
    if (s.nodes.alias[k] >= 0) {
      const members = s.alias_classes[s.nodes.alias[k]];
      const named = members.slice(0, 8).map((n) => s.nodes.name[n]);
      if (members.length > 8) named.push("… " + (members.length - 8) + " more");
      tags.push("alias class " + s.nodes.alias[k] + " (" + named.join(", ") + ")");
    }
    if (fl & F_BW) tags.push("backward");
    if (fl & F_FW) tags.push("forward");
    if (fl & F_SAVED) {
      const sv = s.joint.saved.find((v) => v.node === k);
      tags.push("saved for backward" + (sv && sv.bytes >= 0 ? ", " + human(sv.bytes) : ""));
    }
    if (tags.length) lines.push(tags.join("; "));
    let html = esc(lines.join("\n"));
    if (s.nodes.src[k] >= 0) html += '\n<span class="src">' + esc(s.strings[s.nodes.src[k]]) + "</span>";
    return html;
  }

  function human(n) {
    if (n < 0) return "symbolic";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + " " + u[i];
  }

  function select(sel) {
    selected = sel;
    const d = document.getElementById("details");
    d.classList.remove("empty");
    d.innerHTML = describe(sel.t === "n" ? sel.id : -(sel.id + 1));
  }

  function focusItems(items, maxScale) {
    for (const it of items) revealItem(it);
    relayout();
    let b = { minx: Infinity, miny: Infinity, maxx: -Infinity, maxy: -Infinity };
    for (const it of items) {
      const r = drawList.where.get(rep(it));
      if (!r) continue;
      b.minx = Math.min(b.minx, r.x); b.miny = Math.min(b.miny, r.y); b.maxx = Math.max(b.maxx, r.x + r.w); b.maxy = Math.max(b.maxy, r.y + r.h);
    }
    if (b.minx < Infinity) fitTo(b, maxScale || 1.2);
    draw();
  }

  function focusNode(k) {
    select({ t: "n", id: k });
    focusItems([k], 1.2);
  }

  function showFinding(i) {
    const fd = F.src.findings[i];
    activeFinding = i;
    document.querySelectorAll(".finding").forEach((el) => el.classList.toggle("active", +el.dataset.index === i));
    highlighted = { nodes: new Set(fd.path), groups: new Set(fd.boxes), chain: fd.path.slice() };
    const items = fd.path.concat(fd.boxes.map((x) => -(x + 1)));
    if (fd.node >= 0) select({ t: "n", id: fd.path.length ? fd.path[fd.path.length - 1] : fd.node });
    focusItems(items.length ? items : [fd.node], 1.2);
  }

  // --- panels --------------------------------------------------------------
  function renderPanels() {
    const s = F.src;
    const fl = document.getElementById("findings");
    fl.innerHTML = "";
    if (!s.findings.length) fl.innerHTML = '<div class="empty">no findings</div>';
    const MAX_FINDINGS = 1000;
    s.findings.forEach((fd, i) => {
      if (i >= MAX_FINDINGS) return;
      const el = document.createElement("div");
      el.className = "finding " + fd.severity;
      el.dataset.index = i;
      el.innerHTML = `<div><b>${esc(fd.severity)}</b> graph ${esc(fd.graph || "<root>")}, node ${esc(fd.node >= 0 ? s.nodes.name[fd.node] : "—")}: ${esc(fd.message)}</div>` +
        `<div class="rule">[${esc(fd.rule)}]</div>` + (fd.text ? `<div class="chain">via ${esc(fd.text)}</div>` : "") +
        (fd.stack ? `<div class="stack">${esc(fd.stack)}</div>` : "");
      el.addEventListener("click", () => showFinding(i));
      fl.appendChild(el);
    });
    if (s.findings.length > MAX_FINDINGS) {
      fl.insertAdjacentHTML("beforeend", `<div class="empty">the first ${MAX_FINDINGS} of ${s.findings.length} findings (hopctl lint lists them all)</div>`);
    }
    // maps
    const mp = document.getElementById("maps");
    const parts = [];
    s.graphs.forEach((g, gi) => {
      if (gi >= 300) return;
      const inName = (i) => (g.inputs[i] !== undefined ? `${i} ${g.inputs[i]}` : String(i));
      const outName = (i) => `${i}` + (g.outputs[i] ? ` ${g.outputs[i]}` : "");
      const table = (title, rows, a, b) => `<table><tr><th colspan="2">${title}</th></tr>` +
        (rows.length ? rows.map(([x, y]) => `<tr><td>${esc(a(x))}</td><td>${esc(b(y))}</td></tr>`).join("") : '<tr><td colspan="2" class="empty">{}</td></tr>') + "</table>";
      parts.push(`<h3>${esc(g.name || "<root>")} — ${g.inputs.length} inputs, ${g.outputs.length} outputs</h3>` +
        table("mutated_inputs (provenance)", g.mutations.length ? g.mutations.map((m) => [m.input, m.provenance]) : g.mutated_inputs.map((i) => [i, ""]), inName, (p) => p) +
        table("inp_inp_alias (input → input)", g.inp_inp_alias, inName, inName) +
        table("inp_out_alias (input → output)", g.inp_out_alias, inName, outName) +
        table("out_out_alias (output → output)", g.out_out_alias, outName, outName) +
        table("AOTAutograd kinds (ViewAndMutationMeta)", (g.aot_kinds || []).map((k) => [k.side + " " + k.value, k.kind]), (x) => x, (y) => y));
    });
    if (s.graphs.length > 300) parts.push(`<div class="empty">${s.graphs.length - 300} more graphs not shown</div>`);
    mp.innerHTML = parts.join("");
    // saved values
    const sec = document.getElementById("saved-section");
    document.getElementById("ov-joint-label").hidden = !s.joint;
    sec.hidden = !s.joint;
    if (s.joint) renderSaved("bytes", -1);
  }

  function renderSaved(key, dir) {
    const s = F.src, j = s.joint;
    const rows = j.saved.map((v, i) => ({ ...v, i }));
    rows.sort((a, b) => {
      const x = a[key], y = b[key];
      if (x < y) return -dir;
      if (x > y) return dir;
      return a.i - b.i;
    });
    const cols = [["name", "name"], ["kind", "kind"], ["shape", "shape"], ["dtype", "dtype"], ["bytes", "bytes"], ["why", "why"]];
    const head = cols.map(([k, t]) => `<th class="sortable" data-key="${k}">${t}${k === key ? (dir < 0 ? " ▼" : " ▲") : ""}</th>`).join("");
    // At most MAX_ROWS rows in the DOM, in the current order.
    const MAX_ROWS = 500;
    const body = rows.slice(0, MAX_ROWS).map((v) => `<tr class="clickable" data-node="${v.node}"><td>${esc(v.name)}</td><td>${esc(v.kind)}</td><td>${esc(v.shape || "")}</td><td>${esc(v.dtype || "")}</td><td class="num" data-bytes="${v.bytes}">${esc(human(v.bytes))}</td><td title="${esc((v.why || "") + (v.source ? " — " + v.source : ""))}">${esc((v.why || "").split(":")[0])}</td></tr>`).join("");
    const el = document.getElementById("saved");
    const more = rows.length > MAX_ROWS ? `<div class="empty">the first ${MAX_ROWS} of ${rows.length} in this order</div>` : "";
    // The saved bytes per source line (layer and user line): one bar each,
    // scaled to the largest.
    let bars = "";
    if (j.by_source && j.by_source.length) {
      const top = Math.max(1, ...j.by_source.map((g) => g.bytes));
      const rowsB = j.by_source.slice(0, MAX_ROWS).map((g) => `<div class="src-bar" title="${esc(g.source || "(no source)")}"><span class="src-bytes">${esc(human(g.bytes))}</span><span class="bar" style="width:${Math.round(100 * g.bytes / top)}px"></span> ${esc(g.source || "(no source)")} (${g.count})</div>`).join("");
      bars = `<div id="saved-by-source"><div>saved bytes by source line:</div>${rowsB}</div>`;
    }
    const all = j.save_all_bytes >= 0 ? `<div id="saved-all">saving everything the backward reads (default partition): ${j.save_all_count} values, ${esc(human(j.save_all_bytes))}</div>` : "";
    el.innerHTML = `<div>${j.saved.length} values, ${human(j.total_bytes)} (${esc(j.source)})</div>${all}${bars}<table id="saved-table"><tr>${head}</tr>${body}</table>${more}`;
    el.querySelectorAll("th.sortable").forEach((th) => th.addEventListener("click", () => {
      const k = th.dataset.key;
      renderSaved(k, k === key ? -dir : (k === "bytes" ? -1 : 1));
    }));
    el.querySelectorAll("tr.clickable").forEach((tr) => tr.addEventListener("click", () => { const n = +tr.dataset.node; if (n >= 0) focusNode(n); }));
  }

  const searchEl = document.getElementById("search");
  searchEl.addEventListener("input", () => runSearch(searchEl.value));
  function runSearch(q) {
    const res = document.getElementById("results");
    const title = document.getElementById("results-title");
    res.innerHTML = "";
    q = q.trim().toLowerCase();
    title.hidden = !q;
    if (!q) return [];
    const s = F.src.nodes, hits = [];
    for (let k = 0; k < F.N && hits.length < 200; k++) {
      if (s.name[k].toLowerCase().includes(q) || s.op[k].toLowerCase().includes(q)) hits.push(k);
    }
    for (const k of hits) {
      const d = document.createElement("div");
      d.textContent = s.label[k] + "   [" + (F.src.graphs[s.graph[k]].name || "<root>") + "]";
      d.dataset.node = k;
      d.addEventListener("click", () => focusNode(k));
      res.appendChild(d);
    }
    if (!hits.length) res.innerHTML = '<div class="empty">no match</div>';
    title.textContent = `Search results (${hits.length}${hits.length === 200 ? "+" : ""})`;
    return hits;
  }

  for (const key of ["mutated", "alias", "path", "joint"]) {
    const el = document.getElementById("ov-" + key);
    el.addEventListener("change", () => { overlay[key] = el.checked; draw(); });
  }
  document.getElementById("fit").addEventListener("click", () => { fitTo(drawList.bounds, 1.5); draw(); });
  document.getElementById("collapse").addEventListener("click", () => {
    F.expanded.fill(0);
    for (const t of F.tops) F.expanded[t] = 1;
    F.cache.fill(null);
    relayout(); fitTo(drawList.bounds, 1.5); draw();
  });

  const fileSel = document.getElementById("file");
  DOC.files.forEach((f, i) => {
    const o = document.createElement("option");
    o.value = i; o.textContent = f.path;
    fileSel.appendChild(o);
  });
  fileSel.addEventListener("change", () => showFile(+fileSel.value));

  function showFile(i) {
    const t0 = performance.now();
    F = prepare(DOC.files[i]);
    const t1 = performance.now();
    defaultExpansion(F);
    api.phases = { parse: t0, prepare: t1 - t0 };
    highlighted = { nodes: new Set(), groups: new Set(), chain: [] };
    selected = null; activeFinding = -1;
    renderPanels();
    const t2 = performance.now();
    relayout();
    api.phases.layout = performance.now() - t2;
    initialView();
    resize();
    api.phases.total = performance.now() - t0;
  }

  // The first view: the whole drawing at a scale where labels are legible
  // (MIN_LABEL_PX at 100 % zoom). When the default expansion is too large
  // for that, the boxes it opened are closed again, last opened first,
  // until the drawing fits; a root graph too large even then is shown from
  // its top-left corner at the legible scale.
  function initialView() {
    const legible = MIN_LABEL_PX / FONT_PX;
    fitTo(drawList.bounds, 1.5);
    while (view.k < legible && F.expandOrder.length) {
      const x = F.expandOrder.pop();
      F.expanded[x] = 0;
      invalidate(x);
      place();
      fitTo(drawList.bounds, 1.5);
    }
    if (view.k >= legible) return;
    const b = drawList.bounds;
    view.k = legible;
    view.x = 20 - b.minx * view.k;
    view.y = 20 - b.miny * view.k;
  }

  // A small API for tests and for scripting the page from the console.
  const api = {
    ready: false,
    lastLayoutMs: 0,
    showFile: (i) => { fileSel.value = i; showFile(i); },
    numFiles: () => DOC.files.length,
    layoutStats: () => stats,
    // Requests the page made or tried: resources loaded, and requests the
    // Content-Security-Policy blocked.
    requests: () => performance.getEntriesByType("resource").length + cspViolations,
    numFindings: () => F.src.findings.length,
    showFinding: (i) => showFinding(i),
    search: null,
    // The names of the nodes and boxes drawn highlighted now.
    highlighted: () => {
      const out = [];
      if (!overlay.path) return out;
      for (const r of drawList.nodes) if (highlighted.nodes.has(r.it)) out.push(F.src.nodes.name[r.it]);
      for (const b of drawList.boxes) if (highlighted.groups.has(-b.it - 1)) out.push("box:" + F.src.groups.label[-b.it - 1]);
      return out;
    },
    savedDrawn: () => drawList.nodes.filter((r) => F.src.nodes.flags[r.it] & F_SAVED).length,
    // The boxes drawn: label and whether expanded.
    boxes: () => drawList.boxes.map((b) => ({ label: F.src.groups.label[-b.it - 1], expanded: !!b.expanded })),
    visible: () => ({ nodes: drawList.nodes.length, boxes: drawList.boxes.length }),
    // The view as the user sees it: the canvas's size in CSS pixels, the
    // label font's size on screen, and every drawn node and box in canvas
    // pixels (the browser test checks that the page opens fitted).
    view: () => {
      const r = canvas.getBoundingClientRect();
      const px = (b) => ({ x: view.x + b.x * view.k, y: view.y + b.y * view.k, w: b.w * view.k, h: b.h * view.k });
      return { width: r.width, height: r.height, labelPx: FONT_PX * view.k,
        nodes: drawList.nodes.map(px), boxes: drawList.boxes.map(px) };
    },
    // Screen position (CSS pixels in the canvas) of a visible node.
    nodeCenter: (name) => {
      for (const r of drawList.nodes) if (F.src.nodes.name[r.it] === name) {
        return { x: (r.x + r.w / 2) * view.k + view.x, y: (r.y + r.h / 2) * view.k + view.y };
      }
      return null;
    },
    firstCollapsedBox: () => {
      const r = canvas.getBoundingClientRect();
      for (const b of drawList.boxes) {
        if (b.expanded) continue;
        const p = { x: (b.x + b.w / 2) * view.k + view.x, y: (b.y + b.h / 2) * view.k + view.y };
        if (p.x > 0 && p.y > 0 && p.x < r.width && p.y < r.height) return p;
      }
      return null;
    },
    boxCenter: (label) => {
      for (const b of drawList.boxes) if (F.src.groups.label[-b.it - 1] === label) {
        return { x: (b.x + 20) * view.k + view.x, y: (b.y + Math.min(b.h, HEADER) / 2) * view.k + view.y };
      }
      return null;
    },
    // Expand every box (a test of small files: it lays everything out).
    expandAll: () => { F.expanded.fill(1); F.cache.fill(null); relayout(); draw(); return api.visible(); },
  };
  api.search = (q) => { searchEl.value = q; return runSearch(q).map((k) => F.src.nodes.name[k]); };
  window.hopctlReport = api;
  showFile(0);
  api.ready = true;
  api.readyAt = performance.now();
  document.body.dataset.ready = "1";
})();
