/*
 * Environment portal: the browser client of the portal's JSON API (/api/v1). Vanilla JS, no
 * build step, nothing external (CSP: 'self'). Signs in with a Kubernetes bearer token kept only
 * in sessionStorage, lists / creates / deletes one namespace's environments and follows one live:
 * Server-Sent Events read with fetch() (EventSource cannot send Authorization), SSE framing parsed
 * by shared.js, resumed after a drop with Last-Event-ID and backoff.
 */
(function () {
  'use strict';

  const TOKEN_KEY = 'portal.token';
  const NS_KEY = 'portal.namespace';
  const STATUSES = ['True', 'False', 'Unknown'];
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 10000;
  const FLASH_MS = 1600;
  const FORM_FIELDS = ['name', 'size', 'image', 'database', 'frontend'];

  const state = { token: '', ns: '', envs: [], current: '', stream: null };
  const rows = new Map(); // resource id -> <tr> of #resources
  const flashTimers = new WeakMap();

  // ---------- small helpers ----------
  const $ = (id) => document.getElementById(id);
  const status = (value) => (STATUSES.includes(value) ? value : 'Unknown');
  const showMessage = (text) => { $('message').textContent = text || ''; };

  const el = window.Portal.el;

  // A status pill shows True/False/Unknown as text; CSS colours it by data-status.
  const pill = (value) => el('span', { class: 'pill', 'data-status': status(value) }, status(value));
  function setPill(node, value) {
    node.textContent = status(value);
    node.dataset.status = status(value);
  }

  function safeHref(url) {
    let u = null;
    try { u = new URL(url, window.location.href); } catch (e) { return ''; }
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
  }

  // ---------- API ----------
  const nsPath = () => '/api/v1/namespaces/' + encodeURIComponent(state.ns);
  const envPath = (name) => nsPath() + '/environments' + (name ? '/' + encodeURIComponent(name) : '');
  const authHeaders = (extra) => Object.assign({ Authorization: 'Bearer ' + state.token }, extra);

  // errorBody reads the contract's {"error", "fields"} body, with a fallback text.
  async function errorBody(res) {
    const data = await res.json().catch(() => null);
    if (data && typeof data.error === 'string' && data.error) return data;
    return Object.assign({}, data, { error: 'Request failed: HTTP ' + res.status });
  }

  // api returns {ok, status, data}; when !ok, data is the error body.
  async function api(method, path, body) {
    const headers = authHeaders({ Accept: 'application/json' });
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const json = body === undefined ? undefined : JSON.stringify(body);
    const res = await fetch(path, { method, headers, body: json, cache: 'no-store' }).catch(() => null);
    if (!res) return { ok: false, status: 0, data: { error: 'Network error: the portal could not be reached.' } };
    if (!res.ok) return { ok: false, status: res.status, data: await errorBody(res) };
    return { ok: true, status: res.status, data: (await res.json().catch(() => null)) || {} };
  }

  // ---------- sign in ----------
  async function connect(event) {
    if (event) event.preventDefault();
    const token = $('token').value.trim();
    const ns = $('namespace').value.trim();
    if (!token || !ns) return showMessage('Enter a token and a namespace.');
    Object.assign(state, { token, ns });
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(NS_KEY, ns);
    closeDetail();
    $('connect').disabled = true;
    const [policy, list] = await Promise.all([api('GET', nsPath() + '/policy'), api('GET', envPath())]);
    $('connect').disabled = false;
    applyPolicy(policy.ok ? policy.data : null);
    renderEnvList(list.ok ? list.data.items || [] : []);
    const errors = [policy, list].filter((r) => !r.ok).map((r) => r.data.error);
    showMessage([...new Set(errors)].join(' — ')); // also clears an old message
    $('workspace').hidden = !(policy.ok || list.ok);
  }

  // ---------- policy and create form ----------
  function applyPolicy(policy) {
    const p = policy || {};
    $('create-fieldset').disabled = !policy;
    $('size').replaceChildren(...(p.sizes || []).map((s) => el('option', { value: s }, s)));
    $('image').placeholder = p.defaultImage || '';
    toggleOption('database', Boolean(p.database));
    toggleOption('frontend', Boolean(p.frontend));
    $('frontend-hint').textContent = p.domain ? 'Served under ' + p.domain + '.' : '';
    $('policy-note').textContent = policy
      ? 'Policy for ' + p.namespace + ': cloud ' + p.cloud + ', cluster ' + p.cluster + '.'
      : 'No policy is available for this namespace, so environments cannot be created here.';
    clearFormErrors();
  }

  // toggleOption hides and disables a checkbox the policy does not allow.
  function toggleOption(id, allowed) {
    $(id).disabled = !allowed;
    if (!allowed) $(id).checked = false;
    $(id + '-field').hidden = !allowed;
  }

  function clearFormErrors() {
    for (const f of FORM_FIELDS) {
      $('err-' + f).textContent = '';
      $(f).removeAttribute('aria-invalid');
    }
    $('form-errors').replaceChildren();
    $('form-errors').hidden = true;
  }

  // showFormErrors puts each fields[].message next to its input (#err-<field>)
  // and a summary with links to the inputs in #form-errors.
  function showFormErrors(data) {
    const fields = Array.isArray(data.fields) ? data.fields : [];
    const items = fields.map((f) => {
      const known = FORM_FIELDS.includes(f.field);
      const message = f.message || 'invalid';
      const text = (f.field ? f.field + ': ' : '') + message;
      if (known) {
        const slot = $('err-' + f.field);
        slot.textContent = (slot.textContent ? slot.textContent + ' ' : '') + message;
        $(f.field).setAttribute('aria-invalid', 'true');
      }
      return el('li', null, known ? el('a', { href: '#' + f.field }, text) : text);
    });
    const box = $('form-errors');
    box.replaceChildren(el('p', { class: 'summary-title' }, data.error || 'The environment could not be created.'));
    if (items.length) box.append(el('ul', null, ...items));
    box.hidden = false;
    box.focus();
  }

  // formBody is the POST body; an empty image is left out (JSON.stringify drops undefined).
  function formBody() {
    return {
      name: $('name').value.trim(),
      size: $('size').value,
      image: $('image').value.trim() || undefined,
      database: $('database').checked && !$('database').disabled,
      frontend: $('frontend').checked && !$('frontend').disabled,
    };
  }

  async function createEnv(event) {
    event.preventDefault();
    clearFormErrors();
    const body = formBody();
    $('create').disabled = true;
    const res = await api('POST', envPath(), body);
    $('create').disabled = false;
    showMessage(res.ok || res.status === 400 ? '' : res.data.error);
    if (res.status === 400) return showFormErrors(res.data);
    if (!res.ok) return;
    const name = res.data.name || body.name;
    $('name').value = '';
    await refreshList();
    openEnv(name);
  }

  // ---------- environment list ----------
  async function refreshList() {
    const res = await api('GET', envPath());
    if (!res.ok) return showMessage(res.data.error);
    renderEnvList(res.data.items || []);
  }

  function renderEnvList(items) {
    state.envs = items;
    const entries = items.length ? items.map(envListItem) : [el('li', { class: 'empty' }, 'No environments yet.')];
    $('env-list').replaceChildren(...entries);
  }

  function envListItem(env) {
    const ready = status(env.ready);
    const info = el('div', { class: 'env-info' },
      el('span', { class: 'env-name' }, env.name),
      el('span', { class: 'env-state' }, el('span', { class: 'label' }, 'Ready'), pill(ready),
        env.deleting ? el('span', { class: 'tag' }, 'deleting') : null),
      el('span', { class: 'env-msg muted' }, ready === 'True' ? '' : env.message || ''));
    const actions = el('div', { class: 'env-actions' },
      el('button', { type: 'button', class: 'btn', 'data-action': 'open', 'aria-label': 'Open ' + env.name }, 'Open'),
      el('button', { type: 'button', class: 'btn danger', 'data-action': 'delete', 'aria-label': 'Delete ' + env.name,
        disabled: Boolean(env.deleting) }, 'Delete'));
    return el('li', { class: 'env', 'data-name': env.name, 'data-ready': ready }, info, actions);
  }

  // updateListEntry keeps the list entry in step with what the live stream reports.
  function updateListEntry(name, env) {
    const ready = status(env.ready);
    for (const li of $('env-list').querySelectorAll('li[data-name]')) {
      if (li.dataset.name !== name) continue;
      li.dataset.ready = ready;
      setPill(li.querySelector('.pill'), ready);
      li.querySelector('.env-msg').textContent = ready === 'True' ? '' : env.message || '';
    }
  }

  function onListClick(event) {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const name = button.closest('li[data-name]').dataset.name;
    if (button.dataset.action === 'open') openEnv(name);
    else if (button.dataset.action === 'delete') deleteEnv(name);
  }

  async function deleteEnv(name) {
    if (!window.confirm('Delete environment "' + name + '"? This cannot be undone.')) return;
    const res = await api('DELETE', envPath(name));
    if (!res.ok) return showMessage(res.data.error);
    showMessage('');
    await refreshList();
  }

  // ---------- environment detail ----------
  function openEnv(name) {
    closeStream();
    state.current = name;
    $('env-detail').hidden = false;
    $('env-detail').dataset.deleted = 'false';
    $('env-deleted').hidden = true;
    $('env-name').textContent = name;
    replaceRows([]);
    const known = state.envs.find((e) => e.name === name);
    renderEnv(Object.assign({ name, conditions: [] }, known)); // until the snapshot arrives
    startStream(name);
    $('env-name').focus();
  }

  function closeDetail() {
    closeStream();
    state.current = '';
    $('env-detail').hidden = true;
  }

  function renderEnv(env) {
    const ready = status(env.ready);
    setPill($('env-ready'), ready);
    $('env-ready').dataset.ready = ready;
    setPill($('env-synced'), env.synced);
    $('env-message').textContent = ready === 'True' ? '' : env.message || '';
    renderLink('env-url', 'env-url-row', env.url);
    renderLink('env-frontend-url', 'env-frontend-row', env.frontendUrl);
    if (Array.isArray(env.conditions)) renderConditions(env.conditions);
    updateListEntry(state.current, env);
  }

  // renderLink shows a URL as a link when it is http(s), as text otherwise; hides the row when empty.
  function renderLink(id, rowId, url) {
    const href = url ? safeHref(url) : '';
    $(id).replaceChildren(href ? el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, url) : url || '');
    $(rowId).hidden = !url;
  }

  function renderConditions(conditions) {
    $('env-conditions').replaceChildren(...conditions.map((c) => el('li', { 'data-type': c.type },
      el('span', { class: 'cond-type' }, c.type || '?'), pill(c.status),
      c.reason ? el('span', { class: 'cond-reason' }, c.reason) : null,
      c.message ? el('span', { class: 'muted' }, c.message) : null)));
    $('conditions-empty').hidden = conditions.length > 0;
  }

  // ---------- resource rows: updated in place, found by data-id ----------
  function resourceRow(res) {
    const labels = ['Resource', 'Kind', 'Ready', 'Synced', 'Message'];
    const tr = el('tr', { 'data-id': res.id }, ...labels.map((l) => el('td', { 'data-label': l })));
    fillRow(tr, res);
    return tr;
  }

  function fillRow(tr, res) {
    const [name, kind, ready, synced, message] = tr.cells;
    tr.dataset.ready = status(res.ready);
    name.textContent = res.resource || res.name || res.id;
    name.title = res.id;
    kind.textContent = res.kind || '';
    kind.title = res.apiVersion || '';
    ready.replaceChildren(pill(res.ready));
    synced.replaceChildren(pill(res.synced));
    message.textContent = res.message || '';
  }

  function upsertRow(res) {
    if (!res || !res.id) return;
    let tr = rows.get(res.id);
    if (tr) {
      fillRow(tr, res);
    } else {
      tr = resourceRow(res);
      rows.set(res.id, tr);
      $('resources-body').append(tr);
    }
    flash(tr);
    updateResourceSummary();
  }

  function removeRow(id) {
    const tr = rows.get(id);
    if (tr) tr.remove();
    rows.delete(id);
    updateResourceSummary();
  }

  function replaceRows(resources) {
    rows.clear();
    for (const res of resources) if (res && res.id) rows.set(res.id, resourceRow(res));
    $('resources-body').replaceChildren(...rows.values());
    updateResourceSummary();
  }

  function updateResourceSummary() {
    const ready = [...rows.values()].filter((tr) => tr.dataset.ready === 'True').length;
    $('resources-summary').textContent = rows.size ? '(' + ready + ' of ' + rows.size + ' ready)' : '';
    $('resources-empty').hidden = rows.size > 0;
  }

  // flash highlights a row that just changed; CSS fades it (or not, with reduced motion).
  function flash(tr) {
    tr.classList.remove('flash');
    void tr.offsetWidth; // restart the CSS animation
    tr.classList.add('flash');
    clearTimeout(flashTimers.get(tr));
    flashTimers.set(tr, setTimeout(() => tr.classList.remove('flash'), FLASH_MS));
  }

  function markDeleted() {
    $('env-detail').dataset.deleted = 'true';
    $('env-deleted').hidden = false;
    closeStream('Closed: environment deleted');
    refreshList();
  }

  // ---------- live stream: fetch + SSE parsing + reconnect ----------
  const EVENT_HANDLERS = {
    snapshot: (d) => { renderEnv(d.environment || {}); replaceRows(d.resources || []); },
    environment: (d) => renderEnv(d),
    resource: (d) => upsertRow(d),
    removed: (d) => removeRow(d.id),
    deleted: () => markDeleted(),
  };

  // setStreamState: name is connecting | live | down | closed.
  function setStreamState(name, text) {
    const node = $('stream-status');
    node.dataset.state = name;
    node.textContent = text;
    node.classList.toggle('down', name === 'down');
  }

  function startStream(name) {
    const s = { name, lastId: '', delay: BACKOFF_MIN_MS, controller: null, timer: 0, connected: false, lost: false, closed: false };
    state.stream = s;
    setStreamState('connecting', 'Connecting…');
    connectStream(s);
  }

  function closeStream(text) {
    const s = state.stream;
    if (!s) return;
    s.closed = true;
    clearTimeout(s.timer);
    if (s.controller) s.controller.abort();
    state.stream = null;
    setStreamState('closed', text || 'Closed');
  }

  async function connectStream(s) {
    s.controller = new AbortController();
    const headers = authHeaders({ Accept: 'text/event-stream' });
    if (s.lastId) headers['Last-Event-ID'] = s.lastId;
    const res = await fetch(envPath(s.name) + '/events', { headers, cache: 'no-store', signal: s.controller.signal })
      .catch(() => null);
    if (s.closed) return;
    if (!res) return scheduleReconnect(s);
    if (!res.ok) return streamRefused(s, res);
    setStreamState('live', s.lost ? 'Reconnected' : 'Live');
    s.connected = true;
    // ends when the connection drops or is aborted; scheduleReconnect ignores closed streams
    await window.Portal.readEvents(res.body, (ev) => handleEvent(s, ev)).catch(() => {});
    scheduleReconnect(s);
  }

  // streamRefused: 401/403/404 are final and shown in #message; other statuses are retried.
  async function streamRefused(s, res) {
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      showMessage((await errorBody(res)).error);
      if (state.stream === s) closeStream('Closed');
      return;
    }
    if (res.body) res.body.cancel().catch(() => {});
    scheduleReconnect(s);
  }

  function scheduleReconnect(s) {
    if (s.closed || state.stream !== s) return;
    if (s.connected) s.lost = true;
    setStreamState('down', 'Connection lost — reconnecting…');
    clearTimeout(s.timer);
    s.timer = setTimeout(() => connectStream(s), s.delay);
    s.delay = Math.min(s.delay * 2, BACKOFF_MAX_MS);
  }

  function handleEvent(s, ev) {
    if (s.closed || state.stream !== s) return;
    s.delay = BACKOFF_MIN_MS; // the server really streams, so the next drop starts the backoff again
    if (ev.id !== null) s.lastId = ev.id;
    const handler = EVENT_HANDLERS[ev.type];
    if (!handler || !ev.data.length) return;
    let data = null;
    try { data = JSON.parse(ev.data.join('\n')); } catch (e) { return; } // skip a malformed event
    handler(data || {});
  }

  // ---------- start-up ----------
  function init() {
    $('signin-form').addEventListener('submit', connect);
    $('refresh').addEventListener('click', () => refreshList());
    $('env-list').addEventListener('click', onListClick);
    $('create-form').addEventListener('submit', createEnv);
    $('close-detail').addEventListener('click', closeDetail);
    $('token').value = sessionStorage.getItem(TOKEN_KEY) || '';
    $('namespace').value = sessionStorage.getItem(NS_KEY) || '';
    if ($('token').value && $('namespace').value) connect(); // restore the tab's session after a reload
  }

  document.addEventListener('DOMContentLoaded', init);
}());
