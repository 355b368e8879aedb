// The memory panel: plain script over the panel's JSON API (docs/ui.md), one catalog call per
// request. Every value from the database goes into the page as text (text nodes, attribute
// values), never as markup, and links are only ever the panel's own routes.
'use strict';

(() => {
  // ---- The token: it arrives in the fragment once and stays in this tab only. ----
  const TOKEN_KEY = 'agentmem-token';
  const RESOURCE_KEY = 'agentmem-resource';
  if (location.hash.startsWith('#token=')) {
    sessionStorage.setItem(TOKEN_KEY, location.hash.slice('#token='.length));
    history.replaceState(null, '', location.pathname + '#/');
  }
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

  // ---- Elements, built from data as text. ----
  const SAFE_ATTRS = new Set(['id', 'class', 'type', 'name', 'value', 'for', 'placeholder', 'role',
    'tabindex', 'title', 'min', 'max', 'step', 'rows', 'colspan', 'scope', 'autocomplete',
    'spellcheck', 'required', 'checked', 'selected', 'disabled', 'open', 'lang', 'dir']);

  /** An element: `attrs` of known names only; `on…` handlers; `href` only to a route. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  function setAttrs(el, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2), v);
      } else if (k === 'href') {
        el.setAttribute('href', route(v));
      } else if (SAFE_ATTRS.has(k) || k.startsWith('aria-') || k.startsWith('data-')) {
        el.setAttribute(k, v === true ? '' : String(v));
      } else {
        throw new Error('attribute not allowed: ' + k);
      }
    }
  }

  function append(el, children) {
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  /** A route of the panel (`#/…`), and nothing else. */
  function route(v) {
    const s = String(v);
    if (!s.startsWith('#/')) throw new Error('not a route: ' + s);
    return s;
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    append(el, children);
    return el;
  }

  // ---- The API. ----
  async function call(fn, args) {
    const r = await fetch('/api/' + encodeURIComponent(fn), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Agentmem-Token': token() },
      body: JSON.stringify(args || {}),
      credentials: 'omit',
      cache: 'no-store',
    });
    let body;
    try { body = await r.json(); } catch (_) { body = { error: r.status + ' ' + r.statusText }; }
    if (!r.ok) throw new Error(fn + ': ' + (body.error || r.status));
    return body;
  }
  const rows = async (fn, args) => (await call(fn, args)).rows;
  const value = async (fn, args) => (await call(fn, args)).value;

  // ---- Small views. ----
  const main = document.getElementById('main');
  const statusEl = document.getElementById('status');
  function say(text, error) {
    statusEl.textContent = text || '';
    statusEl.className = error ? 'error' : '';
  }

  const when = (ms) => (ms === null || ms === undefined) ? '—'
    : new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 16);
  const num = (x, d = 2) => (x === null || x === undefined) ? '—' : Number(x).toFixed(d);
  const badge = (text, kind) => h('span', { class: 'badge' + (kind ? ' ' + kind : '') }, text);
  const link = (path, params) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== '' && v !== null && v !== undefined) q.set(k, v);
    const s = q.toString();
    return '#/' + path + (s ? '?' + s : '');
  };
  const idLink = (path, id, text) => h('a', { href: '#/' + path + '/' + encodeURIComponent(id) }, text || id);

  /** Long text shown in part, with a button for the rest (a message may be a megabyte). */
  function longText(text, limit = 1500) {
    const s = text === null || text === undefined ? '' : String(text);
    const box = h('div', { class: 'text' }, s.length > limit ? s.slice(0, limit) + '…' : s);
    if (s.length <= limit) return box;
    const more = h('button', { type: 'button', class: 'secondary' }, 'Show all ' + s.length + ' characters');
    more.addEventListener('click', () => { box.textContent = s; more.remove(); });
    return h('div', {}, box, more);
  }

  /** A share as a bar (its width set through the style object, which the policy allows). */
  function bar(share) {
    const fill = h('span');
    fill.style.width = Math.round(Math.max(0, Math.min(1, Number(share) || 0)) * 100) + '%';
    return h('span', { class: 'bar', 'aria-hidden': 'true' }, fill);
  }

  function table(columns, items, cell) {
    return h('table', {},
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.length
        ? items.map((it) => h('tr', {}, columns.map((c) => h('td', {}, cell(it, c)))))
        : h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, 'Nothing here.'))));
  }

  function field(label, input) {
    return h('label', {}, label, input);
  }

  /** A filter form that, submitted, opens `path` with its filled fields as the query. */
  function routeOnSubmit(form, path) {
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const p = {};
      for (const [k, v] of new FormData(form)) if (v !== '') p[k] = v;
      location.hash = link(path, p);
    });
    return form;
  }

  /** "any", then each of `values`, as a select's options. */
  const anyOf = (values) => [['', 'any']].concat(values.map((t) => [t, t]));

  function select(name, options, current) {
    return h('select', { name },
      options.map(([v, t]) => h('option', { value: v, selected: v === (current || '') }, t)));
  }

  /** Runs a change, reports it, and shows the page again. */
  async function act(what, fn) {
    try {
      say(what + '…');
      await fn();
      say(what + ': done.');
      await render(false);
    } catch (e) {
      say(e.message, true);
    }
  }

  function needResource() {
    return [h('h1', {}, 'No resource'),
      h('p', {}, 'Enter the resource (a project, such as project:webapp) in the box above.')];
  }

  // ---- State from the route. ----
  let resource = sessionStorage.getItem(RESOURCE_KEY) || '';
  function setResource(r) {
    resource = r;
    sessionStorage.setItem(RESOURCE_KEY, r);
    document.getElementById('resource').value = r;
  }

  function parseRoute() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [path, query] = hash.split('?');
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    return { page: parts[0] || '', arg: parts[1], q: new URLSearchParams(query || '') };
  }

  // ---- Pages. ----
  const MEMORY_TYPES = ['gotcha', 'decision', 'preference', 'pattern', 'requirement', 'error_pattern',
    'module_insight', 'prefetch_pattern', 'work_state', 'causal_dependency', 'task_calibration',
    'e2e_observation', 'dead_end', 'work_unit_outcome', 'workflow_recipe', 'context_cost'];
  const SCOPES = ['global', 'module', 'work_unit', 'session'];
  const SOURCES = ['agent_explicit', 'observer_inferred', 'qa_auto', 'mcp_auto', 'commit_auto', 'user_taught'];

  async function dashboard() {
    if (!resource) return needResource();
    const hl = await value('mem_health', { resource_id: resource });
    const m = hl.memories;
    const card = (n, l, href) => h('div', { class: 'card' },
      h('div', { class: 'n' }, href ? h('a', { href }, String(n)) : String(n)), h('div', { class: 'l' }, l));
    const att = hl.attention;
    return [
      h('h1', {}, 'Health of ', resource),
      h('div', { class: 'cards' },
        h('div', { class: 'card' }, h('div', { class: 'score', 'aria-label': 'health score' },
          hl.score === null ? '—' : String(hl.score)), h('div', { class: 'l' }, 'health score (0–100)')),
        card(m.total, 'memories', link('memories')),
        card(m.active, 'active in ' + hl.window_days + ' days'),
        card(m.needs_review, 'need review', link('review')),
        card(m.stale, 'stale', link('memories', { state: 'all' })),
        card(m.pinned, 'pinned'),
        card(m.verified, 'verified')),
      h('p', { class: 'formula' }, 'score = ', hl.formula),
      h('h2', {}, 'Module coverage'),
      hl.modules.length
        ? table(['module', 'files', 'covered', 'coverage'], hl.modules, (r, c) => c === 'coverage'
          ? [bar(r.coverage), ' ', num(r.coverage * 100, 0) + '%']
          : c === 'module' ? h('span', { class: 'mono' }, r.module) : r[c])
        : h('p', { class: 'muted' }, 'No code graph for this resource (agentmem index builds one).'),
      h('h2', {}, 'Needs attention'),
      h('h3', {}, 'Stale memories'),
      table(['memory', 'stale since'], att.stale, (r, c) => c === 'memory'
        ? idLink('memory', r.id, r.content) : when(r.stale_at)),
      h('h3', {}, 'Pending review'),
      table(['memory', 'written'], att.review, (r, c) => c === 'memory'
        ? idLink('memory', r.id, r.content) : when(r.created_at)),
      h('h3', {}, 'Tasks blocked longest'),
      table(['task', 'untouched since'], att.blocked_tasks, (r, c) => c === 'task'
        ? idLink('task', r.id, r.title) : when(r.updated_at)),
    ];
  }

  function memoryFilters(q, hybridOk) {
    const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Memories' },
      field('Search', h('input', { name: 'q', type: 'search', value: q.get('q') || '' })),
      field('Ranking', select('mode', [['bm25', 'BM25'], ['hybrid', 'hybrid']], q.get('mode') || 'bm25')),
      field('Type', select('type', anyOf(MEMORY_TYPES), q.get('type'))),
      field('Scope', select('scope', anyOf(SCOPES), q.get('scope'))),
      field('Source', select('source', anyOf(SOURCES), q.get('source'))),
      field('Least confidence', h('input', { name: 'min_confidence', type: 'number', min: 0, max: 1, step: 0.05, value: q.get('min_confidence') || '' })),
      field('File', h('input', { name: 'file', value: q.get('file') || '' })),
      field('Session', h('input', { name: 'session_id', value: q.get('session_id') || '' })),
      field('State', select('state', [['', 'current'], ['all', 'all, deprecated too']], q.get('state'))),
      h('button', { type: 'submit' }, 'Search'));
    return routeOnSubmit(form, 'memories');
  }

  function filterOptions(q) {
    const o = {};
    if (q.get('type')) o.types = [q.get('type')];
    for (const k of ['scope', 'source', 'file', 'session_id']) if (q.get(k)) o[k] = q.get(k);
    if (q.get('min_confidence')) o.min_confidence = Number(q.get('min_confidence'));
    return o;
  }

  function memoryFlags(r) {
    return [
      r.state && r.state !== 'current' ? badge(r.state, 'bad') : null,
      r.needs_review ? badge('needs review', 'warn') : null,
      r.user_verified ? badge('verified', 'good') : null,
      r.pinned ? badge('pinned') : null,
    ];
  }

  async function memories(q) {
    if (!resource) return needResource();
    const o = filterOptions(q);
    const out = [h('h1', {}, 'Memories'), memoryFilters(q)];
    const query = (q.get('q') || '').trim();
    if (query) {
      let hits;
      if (q.get('mode') === 'hybrid') {
        const r = await rows('mem_recall_hybrid', { query, options: Object.assign({ resource_id: resource, limit: 20, touch: false }, o) });
        hits = r.map((x) => ({ memory_id: x.id, content: x.content, score: x.score, type: x.kind }));
      } else {
        if (q.get('state') === 'all') o.include_deprecated = true;
        hits = await rows('mem_memory_search', { query, options: Object.assign({ resource_id: resource, limit: 20 }, o) });
      }
      out.push(h('p', { class: 'muted' }, hits.length + ' best matches'));
      out.push(table(['memory', 'type', 'score', 'confidence'], hits, (r, c) => ({
        memory: idLink('memory', r.memory_id, r.content),
        type: r.type, score: num(r.score, 3), confidence: num(r.confidence),
      })[c]));
      return out;
    }
    if (q.get('state') === 'all') o.include_deprecated = true;
    if (q.get('cursor')) o.cursor = q.get('cursor');
    o.limit = 50;
    const list = await rows('mem_memory_list', { resource_id: resource, options: o });
    out.push(table(['memory', 'type', 'source', 'confidence', 'written'], list, (r, c) => ({
      memory: [idLink('memory', r.memory_id, r.content), ' ', memoryFlags(r)],
      type: r.type, source: r.source, confidence: num(r.confidence), written: when(r.created_at),
    })[c]));
    out.push(pager(list, 'memories', q));
    return out;
  }

  function pager(list, path, q, limit = 50) {
    const p = Object.fromEntries(q);
    const bar = h('div', { class: 'pager' });
    if (q.get('cursor')) bar.append(h('a', { href: link(path, Object.assign({}, p, { cursor: '' })) }, 'First page'));
    if (list.length >= limit) {
      bar.append(h('a', { href: link(path, Object.assign({}, p, { cursor: list[list.length - 1].cursor })) }, 'Next page'));
    }
    return bar;
  }

  async function memory(id) {
    const g = await value('mem_memory_get', { id });
    if (!g) return [h('h1', {}, 'No such memory'), h('p', { class: 'mono' }, id)];
    const m = g.memory;
    const props = (pairs) => h('dl', { class: 'props' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const chainList = (items) => items.length
      ? h('ul', {}, items.map((x) => h('li', {}, idLink('memory', x.id, x.content), ' ', h('span', { class: 'muted' }, when(x.created_at)))))
      : h('p', { class: 'muted' }, 'None.');
    const edit = h('textarea', { 'aria-label': 'Memory content', name: 'content' }, m.content);
    const newer = h('textarea', { 'aria-label': 'Content of the memory that replaces this one', name: 'supersede' });
    const update = (patch, what) => act(what, () => call('mem_memory_update', { id, patch }));
    return [
      h('h1', {}, 'Memory ', memoryFlags({ state: g.state, needs_review: m.needs_review, user_verified: m.user_verified, pinned: m.pinned })),
      h('div', { class: 'text', id: 'memory-content' }, m.content),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'verify', onclick: () => update({ user_verified: true, needs_review: false }, 'Verify') }, 'Verify'),
        h('button', { type: 'button', class: 'secondary', id: 'pin', onclick: () => update({ pinned: !m.pinned }, m.pinned ? 'Unpin' : 'Pin') }, m.pinned ? 'Unpin' : 'Pin'),
        h('button', { type: 'button', class: 'danger', id: 'deprecate', disabled: m.deprecated, onclick: () => act('Deprecate', () => call('mem_memory_deprecate', { id })) }, 'Deprecate')),
      h('h2', {}, 'Provenance'),
      props([
        ['id', h('span', { class: 'mono' }, m.id)],
        ['type / scope', m.type + ' / ' + m.scope],
        ['source', m.source],
        g.signal ? ['signal', g.signal] : null,
        ['session', g.session ? idLink('session', g.session.id, g.session.id + ' (' + g.session.session_type + ', ' + (g.session.outcome || g.session.status) + ')') : (m.session_id || '—')],
        ['files', m.related_files.length ? m.related_files.map((f) => h('div', { class: 'mono' }, h('a', { href: link('graph', { target: f }) }, f))) : '—'],
        ['commit', m.commit_sha || '—'],
        ['tags', m.tags.length ? m.tags.map((t) => badge(t)) : '—'],
        ['confidence', num(m.confidence) + ' stored, ' + num(g.confidence_now) + ' now' + (m.decay_half_life_days ? ' (half-life ' + m.decay_half_life_days + ' days)' : ' (never decays)')],
        ['accessed', g.access.count + ' times, ' + g.access.since_correction + ' since the last correction; last ' + when(g.access.last_accessed_at)],
        ['written', when(m.created_at) + ', updated ' + when(m.updated_at)],
      ]),
      h('h2', {}, 'Supersedes'), chainList(g.supersedes),
      h('h2', {}, 'Superseded by'), chainList(g.superseded_by),
      h('h2', {}, 'Edit'),
      edit,
      h('div', { class: 'actions' }, h('button', { type: 'button', id: 'save', onclick: () => update({ content: edit.value }, 'Save') }, 'Save the correction')),
      h('h2', {}, 'Supersede'),
      h('p', { class: 'muted' }, 'Write the memory that replaces this one; this one is kept as history.'),
      newer,
      h('div', { class: 'actions' }, h('button', { type: 'button', id: 'supersede', onclick: () => act('Supersede', async () => {
        const r = await value('mem_remember', { resource_id: m.resource_id, memory: { type: m.type, scope: m.scope, content: newer.value, source: 'user_taught', related_files: m.related_files, relations: [{ relation_type: 'supersedes', target_memory_id: id }] } });
        location.hash = '#/memory/' + encodeURIComponent(r.id);
      }) }, 'Supersede')),
    ];
  }

  async function review(q) {
    if (!resource) return needResource();
    const o = { needs_review: true, limit: 50 };
    if (q.get('cursor')) o.cursor = q.get('cursor');
    const list = await rows('mem_memory_list', { resource_id: resource, options: o });
    const items = list.map((r) => {
      const edit = h('textarea', { 'aria-label': 'Corrected content', name: 'content' }, r.content);
      return h('li', { class: 'message', 'data-id': r.memory_id },
        h('div', { class: 'meta' }, r.type, ' · ', r.source, ' · confidence ', num(r.confidence), ' · ', when(r.created_at), ' · ', idLink('memory', r.memory_id, 'provenance')),
        h('details', {}, h('summary', {}, longText(r.content, 400)), edit,
          h('button', { type: 'button', onclick: () => act('Edit and confirm', () => call('mem_memory_update', { id: r.memory_id, patch: { content: edit.value, needs_review: false, user_verified: true } })) }, 'Save and confirm')),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'confirm', onclick: () => act('Confirm', () => call('mem_memory_update', { id: r.memory_id, patch: { needs_review: false, user_verified: true } })) }, 'Confirm'),
          h('button', { type: 'button', class: 'danger reject', onclick: () => act('Reject', () => call('mem_memory_deprecate', { id: r.memory_id })) }, 'Reject')));
    });
    return [h('h1', {}, 'Review queue'),
      h('p', { class: 'muted' }, 'Memories written behind the trust gate or inferred by the observer wait here until a person confirms, corrects or rejects them.'),
      items.length ? h('ul', { class: 'plain' }, items) : h('p', { class: 'muted' }, 'Nothing waits for review.'),
      pager(list, 'review', q)];
  }

  async function threads(q) {
    const o = { limit: 50 };
    if (resource) o.resource_id = resource;
    if (q.get('state')) o.state = q.get('state');
    if (q.get('cursor')) o.cursor = q.get('cursor');
    const list = await rows('mem_thread_list', { options: o });
    const form = h('form', { class: 'filters', 'aria-label': 'Threads' },
      field('State', select('state', [['', 'active and archived'], ['active', 'active'], ['archived', 'archived'], ['deleted', 'deleted']], q.get('state'))),
      h('button', { type: 'submit' }, 'Show'));
    const lifecycle = (t) => t.state === 'active'
      ? h('button', { type: 'button', class: 'secondary archive', onclick: () => act('Archive', () => call('mem_thread_archive', { thread_id: t.id })) }, 'Archive')
      : h('button', { type: 'button', class: 'secondary restore', onclick: () => act('Restore', () => call('mem_thread_restore', { thread_id: t.id })) }, 'Restore');
    return [h('h1', {}, 'Conversations'), routeOnSubmit(form, 'threads'),
      table(['thread', 'state', 'messages', 'tokens', 'updated', 'actions'], list, (t, c) => ({
        thread: idLink('thread', t.id, t.title || t.id),
        state: t.state, messages: t.message_count, tokens: t.token_count, updated: when(t.updated_at),
        actions: h('span', { 'data-id': t.id }, lifecycle(t)),
      })[c]),
      pager(list, 'threads', q)];
  }

  async function thread(id, q) {
    const t = await value('mem_thread_get', { thread_id: id });
    if (!t) return [h('h1', {}, 'No such thread')];
    const o = { limit: 50, order: 'desc' };
    if (q.get('before')) o.before = Number(q.get('before'));
    const page = await rows('mem_messages_page', { thread_id: id, options: o });
    // The observational memory: its state, and the observations a prompt would carry.
    let om = null;
    let observed = '';
    try {
      om = await value('om_status', { thread_id: id });
      observed = await value('om_context', { thread_id: id });
    } catch (_) { om = null; }
    const messages = page.map((m) => h('div', { class: 'message ' + m.role },
      h('div', { class: 'meta' }, '#', m.message_index, ' · ', m.role, ' · ', m.token_count, ' tokens · ', when(m.created_at),
        m.compaction_level ? [' · ', badge('compacted (level ' + m.compaction_level + ')', 'warn')] : null),
      m.summary ? h('div', { class: 'text' }, h('strong', {}, 'Summary: '), m.summary) : null,
      longText(m.content)));
    const last = page.length ? page[page.length - 1].message_index : null;
    const obs = om && om.record ? om.record : null;
    return [
      h('h1', {}, t.title || 'Thread'),
      h('p', { class: 'muted' }, t.state, ' · ', t.message_count, ' messages · ', t.token_count, ' tokens · resource ', t.resource_id),
      h('div', { class: 'actions' },
        t.state === 'active'
          ? h('button', { type: 'button', id: 'archive', onclick: () => act('Archive', () => call('mem_thread_archive', { thread_id: id })) }, 'Archive')
          : h('button', { type: 'button', id: 'restore', onclick: () => act('Restore', () => call('mem_thread_restore', { thread_id: id })) }, 'Restore'),
        t.state !== 'deleted' ? h('button', { type: 'button', class: 'danger', id: 'delete', onclick: () => act('Delete', () => call('mem_thread_delete', { thread_id: id })) }, 'Delete') : null),
      om ? [h('h2', {}, 'Observations'), observations(om, observed)] : null,
      h('h2', {}, 'Messages, newest first'),
      messages.length ? messages : h('p', { class: 'muted' }, 'No messages.'),
      h('div', { class: 'pager' },
        q.get('before') ? h('a', { href: '#/thread/' + encodeURIComponent(id) }, 'Newest') : null,
        page.length >= 50 && last !== null ? h('a', { href: '#/thread/' + encodeURIComponent(id) + '?before=' + last }, 'Older messages') : null),
    ];
  }

  function observations(om, text) {
    const pairs = Object.entries(om).filter(([, v]) => typeof v !== 'object' || v === null).slice(0, 12);
    return [h('dl', { class: 'props' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v === null ? '—' : String(v))])),
      text ? longText(text) : h('p', { class: 'muted' }, 'Nothing observed yet.')];
  }

  async function tasks() {
    const ready = await rows('task_ready', { options: { limit: 20 } });
    const all = await rows('task_list', { options: { limit: 100, status: 'open' } });
    const claim = (t) => h('button', { type: 'button', class: 'claim', 'data-id': t.id, onclick: () => act('Claim', () => call('task_claim', { task_id: t.id, session_id: 'panel' })) }, 'Claim');
    return [h('h1', {}, 'Tasks'),
      h('h2', {}, 'Ready to work on'),
      table(['task', 'priority', 'type', 'assignee', 'actions'], ready, (t, c) => ({
        task: idLink('task', t.id, t.title), priority: t.priority, type: t.type, assignee: t.assignee || '—', actions: claim(t),
      })[c]),
      h('h2', {}, 'Open tasks'),
      table(['task', 'status', 'priority', 'blocked', 'updated'], all, (t, c) => ({
        task: idLink('task', t.id, t.title), status: t.status, priority: t.priority,
        blocked: t.is_blocked ? badge('blocked', 'bad') : '', updated: when(t.updated_at),
      })[c])];
  }

  async function task(id) {
    const shown = await value('task_show', { task_id: id });
    const t = shown.task;
    // The dependency graph: what the task waits for, transitively (30 tasks at most).
    const nodes = new Map([[t.id, { task: t, depth: 0 }]]);
    const edges = [];
    let frontier = [t];
    for (let depth = 1; frontier.length && nodes.size < 30; depth++) {
      const next = [];
      for (const f of frontier) {
        for (const d of f.dependencies || []) {
          edges.push([d.taskId, d.dependsOnId, d.type]);
          if (nodes.has(d.dependsOnId) || nodes.size >= 30) continue;
          const s = await value('task_show', { task_id: d.dependsOnId });
          nodes.set(d.dependsOnId, { task: s.task, depth, blocked: s.isBlocked });
          next.push(s.task);
        }
      }
      frontier = next;
    }
    nodes.get(t.id).blocked = shown.isBlocked;
    const depth = layer(t.id, [...nodes.keys()], edges);
    const drawn = [...nodes.entries()].map(([nid, n]) => ({
      id: nid, depth: depth.get(nid) ?? n.depth, label: n.task.title, sub: n.task.status,
      cls: nid === t.id ? 'root' : n.task.status === 'closed' ? 'closed' : n.blocked ? 'blocked' : '',
      href: '#/task/' + encodeURIComponent(nid),
    }));
    return [h('h1', {}, t.title),
      h('p', {}, badge(t.status), shown.isBlocked ? badge('blocked', 'bad') : null, ' priority ', t.priority, ' · ', t.type, t.assignee ? ' · ' + t.assignee : ''),
      t.description ? longText(t.description) : null,
      t.status === 'open' && !shown.isBlocked ? h('div', { class: 'actions' }, h('button', { type: 'button', id: 'claim', onclick: () => act('Claim', () => call('task_claim', { task_id: id, session_id: 'panel' })) }, 'Claim')) : null,
      shown.blockingTasks.length ? [h('h2', {}, 'Blocked by'), h('ul', {}, shown.blockingTasks.map((b) => h('li', {}, idLink('task', b.id, b.title))))] : null,
      h('h2', {}, 'Dependencies'),
      edges.length ? draw(drawn, edges.map(([a, b, type]) => ({ from: a, to: b, label: type })), 'Dependency graph of ' + t.title)
        : h('p', { class: 'muted' }, 'This task depends on nothing.')];
  }

  /** A layered drawing: nodes in columns by depth, edges as curves with an arrow the way
   *  the relation points (`reverse`: from the later column to the earlier one). */
  function draw(nodes, edges, title) {
    const colW = 310, rowH = 46, boxW = 210, boxH = 34, TOP = 30;
    const byDepth = new Map();
    for (const n of nodes) {
      const col = byDepth.get(n.depth) || [];
      n.row = col.length;
      col.push(n);
      byDepth.set(n.depth, col);
    }
    const depths = [...byDepth.keys()].sort((a, b) => a - b);
    const x = (n) => 10 + depths.indexOf(n.depth) * colW;
    const y = (n) => TOP + n.row * rowH;
    const height = TOP + 10 + Math.max(...[...byDepth.values()].map((c) => c.length)) * rowH;
    const width = 20 + (depths.length - 1) * colW + boxW;
    const at = new Map(nodes.map((n) => [n.id, n]));
    const g = svg('svg', { class: 'graph', viewBox: '0 0 ' + width + ' ' + height, width, height, role: 'group', 'aria-label': title });
    g.append(svg('title', {}, title),
      svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))));
    for (const e of edges) {
      const a = at.get(e.from), b = at.get(e.to);
      if (!a || !b) continue;
      // To the next column: a curve between the boxes' sides. Further on: an arc over the
      // boxes between, from top to top. Back or within a column: around the right side.
      const span = depths.indexOf(b.depth) - depths.indexOf(a.depth);
      let d, lx, ly;
      if (span === 1) {
        const [x1, y1, x2, y2] = [x(a) + boxW, y(a) + boxH / 2, x(b), y(b) + boxH / 2];
        const m = (x1 + x2) / 2;
        d = 'M' + x1 + ',' + y1 + ' C' + m + ',' + y1 + ' ' + m + ',' + y2 + ' ' + x2 + ',' + y2;
        [lx, ly] = [x1 + 8, y2 - 4];
      } else if (span > 1) {
        const [x1, y1, x2, y2] = [x(a) + boxW - 30, y(a), x(b) + 30, y(b)];
        const top = Math.min(y1, y2) - TOP + 4;
        d = 'M' + x1 + ',' + y1 + ' C' + x1 + ',' + top + ' ' + x2 + ',' + top + ' ' + x2 + ',' + y2;
        [lx, ly] = [(x1 + x2) / 2, top + 10];
      } else {
        const [x1, y1, x2, y2] = [x(a) + boxW, y(a) + boxH / 2, x(b) + boxW, y(b) + boxH / 2];
        const bend = Math.max(x1, x2) + 40;
        d = 'M' + x1 + ',' + y1 + ' C' + bend + ',' + y1 + ' ' + bend + ',' + y2 + ' ' + x2 + ',' + y2;
        [lx, ly] = [bend - 30, (y1 + y2) / 2];
      }
      const attrs = { class: 'edge', d };
      attrs[e.reverse ? 'marker-start' : 'marker-end'] = 'url(#arrow)';
      g.append(svg('path', attrs));
      if (e.label) g.append(svg('text', { class: 'label', x: lx, y: ly }, e.label));
    }
    for (const n of nodes) {
      const a = svg('a', { href: n.href });
      a.append(svg('rect', { class: 'node ' + (n.cls || ''), x: x(n), y: y(n), width: boxW, height: boxH, rx: 5 }),
        svg('text', { x: x(n) + 8, y: y(n) + 14 }, clip(n.label, 30)),
        svg('text', { class: 'label', x: x(n) + 8, y: y(n) + 28 }, clip(n.sub || '', 34)));
      a.append(svg('title', {}, n.label));
      g.append(a);
    }
    return g;
  }

  /** Each node's column: its longest distance from the root along `edges` (bounded, so a
   *  cycle cannot run away), which puts a task after everything that leads to it. */
  function layer(rootId, ids, edges) {
    const depth = new Map([[rootId, 0]]);
    for (let round = 0; round < ids.length; round++) {
      let moved = false;
      for (const [a, b] of edges) {
        if (!depth.has(a)) continue;
        const d = Math.min(depth.get(a) + 1, ids.length);
        if (!depth.has(b) || depth.get(b) < d) { depth.set(b, d); moved = true; }
      }
      if (!moved) break;
    }
    return depth;
  }
  const clip = (s, n) => { const t = String(s === null || s === undefined ? '' : s); return t.length > n ? t.slice(0, n - 1) + '…' : t; };

  async function graph(q) {
    if (!resource) return needResource();
    const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Code graph' },
      field('File or symbol', h('input', { name: 'target', value: q.get('target') || '', placeholder: 'src/auth/tokens.ts:verifyJwt' })),
      field('View', select('view', [['neighbors', 'neighbourhood'], ['impact', 'impact']], q.get('view'))),
      field('Depth', h('input', { name: 'depth', type: 'number', min: 1, max: 5, value: q.get('depth') || '1' })),
      field('Edge types', h('input', { name: 'edges', value: q.get('edges') || '', placeholder: 'imports,calls' })),
      h('button', { type: 'submit' }, 'Show'));
    const out = [h('h1', {}, 'Code graph'), routeOnSubmit(form, 'graph')];
    const target = q.get('target');
    if (!target) {
      out.push(h('p', { class: 'muted' }, 'Name a file (src/auth/tokens.ts) or a symbol in a file (src/auth/tokens.ts:verifyJwt).'));
      return out;
    }
    const view = q.get('view') === 'impact' ? 'graph_impact' : 'graph_neighbors';
    const input = { target, maxDepth: Number(q.get('depth') || 1) };
    if (view === 'graph_neighbors') input.limit = 60;
    const edges = (q.get('edges') || '').split(',').map((s) => s.trim()).filter(Boolean);
    if (edges.length) input.edgeTypes = edges;
    // The tool names the target as a person does (a path, path:symbol); the table function
    // then gives each reached node's path, which the drawing needs.
    const ans = await value('mem_tool', { name: view, input, context: { resourceId: resource } });
    if (ans.success === false) { out.push(h('p', { class: 'error', role: 'alert' }, ans.error)); return out; }
    const options = { max_depth: input.maxDepth, direction: view === 'graph_impact' ? 'in' : 'both', limit: 60 };
    if (edges.length) options.edge_types = edges;
    const reached = await rows('graph_neighbors', { node_id: ans.nodeId, options });
    const direction = new Map((ans.neighbors || []).map((n) => [n.id, n.direction]));
    const nodes = [{ id: ans.nodeId, depth: 0, label: target, sub: 'target', cls: 'root', href: link('graph', { target }) }];
    const drawnEdges = [];
    const named = (n) => n.file_path ? n.file_path + (n.type === 'file' ? '' : ':' + n.label) : (n.label || n.node_id);
    const targetOf = (n) => n.file_path && n.type === 'file' ? n.file_path : n.node_id;
    for (const n of reached) {
      nodes.push({ id: n.node_id, depth: n.depth, label: named(n), sub: n.type, href: link('graph', { target: targetOf(n), view: q.get('view') || '' }) });
      // The path runs along the edges' direction: the reached node is at one end, and the
      // node before it on the way from the target is its neighbour in the path.
      const path = Array.isArray(n.path) ? n.path : [];
      const types = Array.isArray(n.edge_types) ? n.edge_types : [];
      const from = path.length < 2 ? ans.nodeId
        : path[0] === n.node_id ? path[1] : path[path.length - 2];
      // Impact lists what uses the target; a neighbour of direction "in" uses it too.
      const reverse = view === 'graph_impact' || direction.get(n.node_id) === 'in';
      drawnEdges.push({ from, to: n.node_id, label: types.length ? types[types.length - 1] : '', reverse });
    }
    out.push(draw(nodes, drawnEdges, (view === 'graph_impact' ? 'Impact of ' : 'Neighbourhood of ') + target));
    if (view === 'graph_impact') {
      out.push(h('p', {}, String(ans.dependents), ' dependents in ', String((ans.files || []).length), ' files', ans.hubs && ans.hubs.length ? ' (hubs cut short: ' + ans.hubs.length + ')' : ''));
    }
    out.push(table(['node', 'type', 'depth', 'via', 'file'], reached, (n, c) => ({
      node: h('a', { href: link('graph', { target: targetOf(n) }) }, n.label || n.node_id),
      type: n.type, depth: n.depth, via: (Array.isArray(n.edge_types) ? n.edge_types : []).join(' → '),
      file: h('span', { class: 'mono' }, n.file_path || '—'),
    })[c]));
    if (reached.length >= 60) out.push(h('p', { class: 'muted' }, 'The first 60 nodes: narrow the edge types or the depth.'));
    return out;
  }

  async function sessions(q) {
    if (!resource) return needResource();
    const o = { limit: 20 };
    if (q.get('cursor')) o.cursor = q.get('cursor');
    const list = await rows('mem_session_list', { resource_id: resource, options: o });
    return [h('h1', {}, 'Sessions'),
      table(['session', 'type', 'status', 'outcome', 'events', 'started'], list, (s, c) => ({
        session: idLink('session', s.id), type: s.session_type, status: s.status, outcome: s.outcome || '—', events: s.events, started: when(s.started_at),
      })[c]),
      pager(list, 'sessions', q, 20)];
  }

  async function session(id) {
    const s = await value('mem_session_summary', { session_id: id });
    const list = (items, empty) => items && items.length
      ? h('ul', {}, items.map((m) => {
        const id = m.memory_id || m.id;
        const text = m.citation_text || m.content || id;
        return h('li', {}, id ? idLink('memory', id, text) : String(text), m.type ? [' ', badge(m.type)] : null);
      }))
      : h('p', { class: 'muted' }, empty);
    return [h('h1', {}, 'Session ', h('span', { class: 'mono' }, id)),
      h('p', {}, badge(s.session_type || ''), badge(s.status || ''), s.outcome ? badge(s.outcome) : null),
      h('h2', {}, 'What was remembered'), list(s.remembered, 'No earlier memory was used.'),
      h('h2', {}, 'What was learned'), list(s.learned, 'Nothing new was learned.'),
      s.tokens_saved_estimate !== undefined ? h('p', { class: 'muted' }, 'Tokens saved (estimate): ', String(s.tokens_saved_estimate)) : null,
      s.text ? [h('h2', {}, 'Summary'), h('div', { class: 'text' }, s.text)] : null];
  }

  const PAGES = {
    '': ['Health', () => dashboard()],
    memories: ['Memories', (r) => memories(r.q)],
    memory: ['Memory', (r) => memory(r.arg)],
    review: ['Review', (r) => review(r.q)],
    threads: ['Conversations', (r) => threads(r.q)],
    thread: ['Conversation', (r) => thread(r.arg, r.q)],
    tasks: ['Tasks', () => tasks()],
    task: ['Task', (r) => task(r.arg)],
    graph: ['Code graph', (r) => graph(r.q)],
    sessions: ['Sessions', (r) => sessions(r.q)],
    session: ['Session', (r) => session(r.arg)],
  };
  const NAV_OF = { memory: 'memories', thread: 'threads', task: 'tasks', session: 'sessions' };

  let rendering = 0;
  async function render(focus) {
    const r = parseRoute();
    const page = PAGES[r.page] || PAGES[''];
    const navPage = NAV_OF[r.page] || r.page;
    for (const a of document.querySelectorAll('#nav a')) {
      if (a.getAttribute('href') === '#/' + navPage) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = page[0] + ' · agentmem';
    const mine = ++rendering;
    main.setAttribute('aria-busy', 'true');
    let content;
    try {
      content = await page[1](r);
    } catch (e) {
      content = [h('h1', {}, page[0]), h('p', { class: 'error', role: 'alert' }, e.message)];
    }
    if (mine !== rendering) return;
    main.replaceChildren(...[content].flat(Infinity).filter(Boolean));
    main.removeAttribute('aria-busy');
    main.setAttribute('data-page', r.page || 'health');
    if (focus) main.focus();
  }

  async function start() {
    document.getElementById('resource-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      setResource(document.getElementById('resource').value.trim());
      render(true);
    });
    window.addEventListener('hashchange', () => { say(''); render(true); });
    if (!token()) {
      main.replaceChildren(h('h1', {}, 'No token'), h('p', {}, 'Open the panel with the address agentmem ui printed: it carries this run\'s token.'));
      return;
    }
    try {
      const config = (await fetch('/api/config', { headers: { 'X-Agentmem-Token': token() }, cache: 'no-store' }).then((r) => r.json()));
      if (!resource && config.resource) setResource(config.resource);
    } catch (_) { /* the pages say what fails */ }
    document.getElementById('resource').value = resource;
    render(false);
  }
  start();
})();
