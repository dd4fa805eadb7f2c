/*
 * Fleet view: the browser client of GET /api/v1/fleet/events. Vanilla JS, no build step,
 * nothing external (CSP: 'self'). Signs in with the Kubernetes bearer token the environment page
 * keeps in sessionStorage, follows the fleet's stream (each event the whole view, as this user may
 * see it) and renders each wave: its gate, its Clusters per cloud, what it waits for. Reconnects
 * with backoff; every event is the whole view, so nothing is resumed.
 */
(function () {
  'use strict';

  const TOKEN_KEY = 'portal.token';
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 10000;
  // The gate's verdicts (rollout.Decide's) as the badge says them.
  const VERDICTS = { Adopt: 'Open', Keep: 'Adopted', Hold: 'Holds', Halt: 'Halted', Approval: 'Awaits approval' };
  // A Cluster's verdict (the fleet controller's ruling on it, or Pinned)
  // as its row says it.
  const RULINGS = { Adopt: 'Adopts', Keep: 'Keeps its target', Hold: 'Held', Halt: 'Halted', Approval: 'Awaits approval', Pinned: 'Pinned' };

  // A release wave's gate, and an XR's move (the fleet controller's:
  // fleet.ReleaseMoves), as the page says them.
  const RELEASE_GATES = { Adopt: 'Open', Keep: 'Moved', Hold: 'Holds', Halt: 'Halted', Approval: 'Awaits approval' };
  const RELEASE_MOVES = { Adopt: 'Moves now', Keep: 'Selected', Hold: 'Held', Halt: 'Halted', Approval: 'Awaits approval', Pinned: 'Pinned' };

  const state = { token: '', controller: null, timer: 0, delay: BACKOFF_MIN_MS, connected: false };
  const $ = (id) => document.getElementById(id);
  const showMessage = (text) => { $('message').textContent = text || ''; };

  const el = window.Portal.el;
  const pill = (ok, yes, no) => el('span', { class: 'pill', 'data-status': ok ? 'True' : 'False' }, ok ? yes : no);
  const key = (c) => c.namespace + '/' + c.name;
  // A legacy XR (XCluster, XDatabase, ...) counts in its claim's namespace;
  // one of no claim in none.
  const legacy = (kind) => /^X[A-Z]/.test(kind || '');
  const where = (c) => legacy(c.kind) ? c.kind + ' · ' + (c.namespace ? 'claim in ' + c.namespace : 'cluster-scoped, no claim') : c.namespace;
  // A chart map as "name version" items, in name order.
  const chartList = (charts) => Object.keys(charts || {}).sort().map((n) => el('span', { class: 'chart', 'data-chart': n }, n + ' ' + charts[n]));

  // ---------- rendering: each event replaces the view ----------
  function render(view) {
    $('fleet').hidden = false;
    $('fleet-target').textContent = view.target || 'none';
    $('fleet-charts').replaceChildren(...chartList(view.charts));
    $('fleet-sources').textContent = (view.sources || []).join(', ') || 'no baseline EnvironmentConfig';
    $('fleet-note').textContent = view.message || '';
    $('fleet-note').hidden = !view.message;
    const waves = view.waves || [];
    $('waves').replaceChildren(...waves.map((w, i) => wave(view, w, i, waves[i + 1])));
    renderRelease(view.release);
  }

  function wave(view, w, i, next) {
    const name = view.rollout ? w.name : 'All Clusters';
    const gate = w.gate || {};
    const head = el('div', { class: 'card-head' },
      el('h2', null, el('span', { class: 'wave-index' }, String(i + 1)), name),
      el('span', { class: 'verdict', 'data-verdict': gate.verdict || 'None', title: gate.verdict || '' }, VERDICTS[gate.verdict] || 'No target'));
    const facts = el('dl', { class: 'facts' },
      fact('Earlier waves', i === 0 ? 'none: it goes first' : waitsText(gate)),
      fact('Moves', (gate.changes || []).length ? gate.changes.join(', ') : 'nothing left to move'),
      fact('Approval', approvalText(w, gate)),
      fact('Max unavailable', w.maxUnavailable > 0 ? String(w.maxUnavailable) + ' at once' : 'no limit'),
      w.soak ? fact('Soak', w.soak + ' Ready before the next wave') : null,
      fact('Done', w.total ? w.done + ' of ' + w.total + ' run their target and are Ready' : 'none you may see'),
      w.namespaces && w.namespaces.length ? fact('Counts', 'Clusters of ' + w.namespaces.join(', ')) : null);
    const section = el('li', { class: 'card wave', 'data-wave': w.name, 'data-verdict': gate.verdict || '' },
      head, facts, el('p', { class: 'gate-message muted' }, sentence(gate.message)));
    if ((gate.waitsFor || []).length || gate.hidden) section.append(waitsFor(gate));
    const clouds = w.clouds || [];
    if (!clouds.length) section.append(el('p', { class: 'muted empty-wave' }, 'No Cluster of this wave that you may see.'));
    for (const c of clouds) section.append(cloud(c));
    if (next) section.append(el('p', { class: 'next-wave' }, 'Next: ' + (view.rollout ? next.name : '') + ' ' + nextText(next)));
    return section;
  }

  const sentence = (s) => (s ? s[0].toUpperCase() + s.slice(1) + (/[.:]$/.test(s) ? '' : '.') : '');
  const fact = (dt, dd) => el('div', null, el('dt', null, dt), el('dd', null, dd));

  // What the wave's approval gate says: each change it waits for by name
  // (the minor, "cert-manager=v1.19.2"), as approvals list them.
  function approvalText(w, gate) {
    if (!w.requiresApproval) return 'not required';
    if ((gate.unapproved || []).length) return 'required, not given for ' + gate.unapproved.join(', ');
    return w.approved ? 'approved for ' + (gate.changes || []).join(', ') : 'nothing left to approve';
  }

  function waitsText(gate) {
    const n = (gate.waitsFor || []).length + (gate.hidden || 0);
    if (gate.verdict === 'Halt') return 'halted by a failed Cluster';
    return n ? 'waiting for ' + n + ' Cluster(s)' : 'done';
  }

  function nextText(next) {
    const gate = next.gate || {};
    const n = (gate.waitsFor || []).length + (gate.hidden || 0);
    if (gate.verdict === 'Approval') return 'waits for approval.';
    if (gate.verdict === 'Halt') return 'is halted.';
    return n ? 'waits for ' + n + ' Cluster(s) of earlier waves.' : 'waits for nothing of earlier waves.';
  }

  function waitsFor(gate) {
    // The charts the gate moves, as each Cluster waited for runs them.
    const moved = (gate.changes || []).filter((ch) => ch.includes('=')).map((ch) => ch.split('=')[0]);
    const runsCharts = (c) => moved.map((n) => ', ' + n + ' ' + ((c.charts || {})[n] || 'unknown')).join('');
    const items = (gate.waitsFor || []).map((c) => el('li', { 'data-key': key(c) },
      el('strong', null, key(c)), ' (' + (c.cloud || '?') + ') runs ' + (c.runs || 'nothing yet') + runsCharts(c),
      c.ready ? '' : ', not Ready', c.failed ? ' — failed: ' + (c.reason || '') : ''));
    if (gate.hidden) items.push(el('li', { class: 'hidden-count', 'data-hidden': gate.hidden }, gate.hidden + ' Cluster(s) of namespaces you may not see'));
    return el('div', { class: 'waits-for' }, el('h3', null, 'Waits for'), el('ul', null, ...items));
  }

  function cloud(c) {
    const rows = (c.clusters || []).map(clusterRow);
    return el('div', { class: 'cloud', 'data-cloud': c.cloud },
      el('h3', null, c.cloud || 'no cloud label', el('span', { class: 'muted' }, ' · ' + rows.length + ' Cluster(s)')),
      el('div', { class: 'table-wrap' }, el('table', { class: 'clusters' },
        el('thead', null, el('tr', null, ...['Cluster', 'Runs', 'Control plane', 'Pools', 'Charts', 'Asks', 'State', 'Verdict'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', null, ...rows))));
  }

  function clusterRow(c) {
    const pools = (c.pools || []).map((p) => el('span', { class: 'pool' }, p.name + ' ' + (p.version || '—'), p.ready ? '' : ' (not ready)'));
    const state = c.failed ? el('span', { class: 'tag' }, 'failed') : pill(c.ready, 'Ready', 'Not Ready');
    const verdict = c.verdict || '';
    return el('tr', { 'data-key': key(c), 'data-kind': c.kind || 'Cluster', 'data-ready': String(c.ready), 'data-failed': String(c.failed), 'data-verdict': verdict },
      el('td', { 'data-label': 'Cluster' }, el('span', { class: 'cluster-name' }, c.name), el('span', { class: 'muted' }, where(c)),
        c.label ? el('span', { class: 'muted', title: 'its label names a wave the environment does not count it in' }, 'label: ' + c.label) : ''),
      el('td', { 'data-label': 'Runs' }, c.runs || 'nothing yet', c.pinned ? el('span', { class: 'muted' }, 'pinned: out of the rollout') : ''),
      el('td', { 'data-label': 'Control plane' }, c.controlPlane || '—'),
      el('td', { 'data-label': 'Pools' }, ...pools),
      el('td', { 'data-label': 'Charts', class: 'charts' }, ...(Object.keys(c.charts || {}).length ? chartList(c.charts) : ['—'])),
      el('td', { 'data-label': 'Asks' }, c.asks || '—', c.step ? el('span', { class: 'muted' }, c.step) : ''),
      el('td', { 'data-label': 'State' }, state, c.deleting ? el('span', { class: 'tag' }, 'deleting') : '', c.reason ? el('span', { class: 'muted' }, c.reason) : ''),
      el('td', { 'data-label': 'Verdict', class: 'ruling' },
        el('span', { class: 'verdict', 'data-verdict': verdict || 'None' }, RULINGS[verdict] || 'Not reported'),
        el('span', { class: 'muted ruling-message' }, verdict ? sentence(c.message) : 'It reports no target (status.rollout): no ruling yet.'),
        c.until ? el('span', { class: 'muted ruling-until' }, 'until ' + c.until) : ''));
  }

  // ---------- the platform release: per wave, its XRs of every kind ----------
  function renderRelease(rel) {
    $('release-part').hidden = !rel;
    if (!rel) {
      $('release-waves').replaceChildren();
      return;
    }
    $('release-title').textContent = (rel.rollback ? 'Rollback to ' : 'Release ') + (rel.target || '?') + ' (from ' + (rel.from || '?') + ')';
    const direction = $('release-direction');
    direction.textContent = rel.rollback ? 'Rolling back: the last wave first' : 'Rolling out: the first wave first';
    direction.dataset.rollback = String(Boolean(rel.rollback));
    $('release-target').textContent = rel.target || 'none';
    $('release-from').textContent = rel.from || 'none';
    $('release-outside').textContent = rel.outside ? rel.outside + ' XR(s) whose Composition is no release\'s: not moved' : 'none';
    $('release-note').textContent = rel.message || '';
    $('release-note').hidden = !rel.message;
    const waves = rel.waves || [];
    $('release-waves').replaceChildren(...waves.map((w, i) => releaseWave(rel, w, i)));
  }

  // What a release wave's approval gate says: a rollback needs none.
  function releaseApproval(rel, w) {
    if (rel.rollback) return { text: 'No approval: a rollback', status: 'None' };
    if (!w.requiresApproval) return { text: 'No approval needed', status: 'None' };
    return w.approved ? { text: 'Approved: release=' + rel.target, status: 'True' } : { text: 'Needs approval: release=' + rel.target, status: 'False' };
  }

  function releaseWave(rel, w, i) {
    const gate = w.gate || {};
    const approval = releaseApproval(rel, w);
    const head = el('div', { class: 'card-head' },
      el('h2', null, el('span', { class: 'wave-index' }, String(i + 1)), w.name),
      el('div', { class: 'head-side' },
        el('span', { class: 'badge approval', 'data-approval': approval.status }, approval.text),
        el('span', { class: 'done', title: 'XRs you may see that run ' + rel.target + ' and are Ready' }, w.done + ' of ' + w.total + ' on ' + rel.target),
        el('span', { class: 'verdict', 'data-verdict': gate.verdict || 'None', title: gate.verdict || '' }, RELEASE_GATES[gate.verdict] || 'No gate')));
    const notes = [w.namespaces && w.namespaces.length ? 'Counts XRs of ' + w.namespaces.join(', ') : '', w.soak ? 'soaks ' + w.soak : '',
      w.maxUnavailable > 0 ? 'moves at most ' + w.maxUnavailable + ' at once' : '', w.pinned ? w.pinned + ' pinned XR(s) count for nothing' : ''].filter(Boolean);
    const section = el('li', { class: 'card wave release-wave', 'data-wave': w.name, 'data-verdict': gate.verdict || '' },
      head, notes.length ? el('p', { class: 'muted wave-notes' }, sentence(notes.join('; '))) : '',
      el('p', { class: 'gate-message' }, sentence(gate.message), gate.until ? el('span', { class: 'muted' }, ' Until ' + gate.until + '.') : ''));
    const waits = (gate.waitsFor || []).map((k) => el('li', { 'data-key': k, class: k === gate.failed ? 'failed' : null }, k, k === gate.failed ? ' — failed' : ''));
    if (gate.hidden) waits.push(el('li', { class: 'hidden-count', 'data-hidden': gate.hidden }, gate.hidden + ' XR(s) of namespaces you may not see'));
    if (waits.length) section.append(el('div', { class: 'waits-for' }, el('h3', null, 'Waits for'), el('ul', null, ...waits)));
    const xrs = w.xrs || [];
    if (!xrs.length) {
      section.append(el('p', { class: 'muted empty-wave' }, 'No XR of this wave that you may see.'));
      return section;
    }
    section.append(el('div', { class: 'table-wrap' }, el('table', { class: 'clusters release-xrs' },
      el('thead', null, el('tr', null, ...['XR', 'Runs → selects', 'State', 'Move'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', null, ...xrs.map((x) => xrRow(rel, x))))));
    return section;
  }

  function xrRow(rel, x) {
    const ref = x.kind + ' ' + x.namespace + '/' + x.name;
    const selects = [el('span', { class: 'release-pair' }, (x.runs || 'none yet') + ' → ' + (x.selects || 'none'))];
    if (x.claim) selects.push(el('span', { class: 'muted release-claim' }, 'on its claim ' + x.claim));
    if (x.selects && !x.owned && !x.pinned) selects.push(el('span', { class: 'muted' }, 'selected by its owner, not the rollout'));
    if (x.select && x.select !== x.selects) selects.push(el('span', { class: 'muted' }, 'the controller selects ' + x.select));
    return el('tr', { 'data-xr': ref, 'data-kind': x.kind, 'data-verdict': x.verdict, 'data-ready': String(x.ready), 'data-synced': String(x.synced), 'data-failed': String(Boolean(x.failed)) },
      el('td', { 'data-label': 'XR' }, el('span', { class: 'xr-kind' }, x.kind), el('span', { class: 'cluster-name' }, x.name),
        el('span', { class: 'muted' }, legacy(x.kind) ? (x.namespace ? 'claim in ' + x.namespace : 'cluster-scoped, no claim') : x.namespace)),
      el('td', { 'data-label': 'Runs → selects', class: 'runs' }, ...selects),
      el('td', { 'data-label': 'State', class: 'state' }, pill(x.ready, 'Ready', 'Not Ready'), ' ', pill(x.synced, 'Synced', 'Not Synced'),
        ...(x.failed ? [' ', el('span', { class: 'tag' }, 'failed')] : []), x.stale ? el('span', { class: 'tag' }, 'stale') : '', x.reason ? el('span', { class: 'muted' }, x.reason) : ''),
      el('td', { 'data-label': 'Move', class: 'ruling' },
        el('span', { class: 'verdict', 'data-verdict': x.verdict || 'None' }, RELEASE_MOVES[x.verdict] || x.verdict || '—'),
        el('span', { class: 'muted ruling-message' }, sentence(x.message)),
        x.until ? el('span', { class: 'muted ruling-until' }, 'until ' + x.until) : ''));
  }

  // ---------- the stream ----------
  function setStreamState(name, text) {
    const node = $('stream-status');
    node.dataset.state = name;
    node.textContent = text;
    node.classList.toggle('down', name === 'down');
  }

  async function follow() {
    clearTimeout(state.timer);
    if (state.controller) state.controller.abort();
    const controller = new AbortController();
    state.controller = controller;
    const headers = { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' };
    const res = await fetch('/api/v1/fleet/events', { headers, cache: 'no-store', signal: controller.signal }).catch(() => null);
    if (state.controller !== controller) return;
    if (res && !res.ok) {
      const body = await res.json().catch(() => null);
      showMessage((body && body.error) || 'Request failed: HTTP ' + res.status);
      if (res.status === 401 || res.status === 403) return setStreamState('closed', 'Closed');
    }
    if (res && res.ok) {
      showMessage('');
      setStreamState('live', state.connected ? 'Reconnected' : 'Live');
      state.connected = true;
      await window.Portal.readEvents(res.body, (ev) => {
        if (ev.type !== 'fleet' || !ev.data.length) return;
        state.delay = BACKOFF_MIN_MS;
        try { render(JSON.parse(ev.data.join('\n'))); } catch (e) { /* skip a malformed event */ }
      }).catch(() => {});
      if (state.controller !== controller) return;
    }
    setStreamState('down', 'Connection lost — reconnecting…');
    state.timer = setTimeout(follow, state.delay);
    state.delay = Math.min(state.delay * 2, BACKOFF_MAX_MS);
  }

  function connect(event) {
    if (event) event.preventDefault();
    const token = $('token').value.trim();
    if (!token) return showMessage('Enter a token.');
    Object.assign(state, { token, connected: false, delay: BACKOFF_MIN_MS });
    sessionStorage.setItem(TOKEN_KEY, token);
    setStreamState('connecting', 'Connecting…');
    follow();
  }

  function init() {
    $('signin-form').addEventListener('submit', connect);
    $('token').value = sessionStorage.getItem(TOKEN_KEY) || '';
    if ($('token').value) connect();
  }

  document.addEventListener('DOMContentLoaded', init);
}());
