// The shop's admin console: plain DOM, no framework, no build step. Every
// call goes to api/ beside this page with the initData Telegram gave it;
// the server decides who may do what (the staff gate) and the page only
// shows what the session says the user may call. Text is set with
// textContent; the only markup taken from the server is the charts' SVG,
// parsed as SVG (no script in it).
'use strict';
(() => {
  const tg = window.Telegram && window.Telegram.WebApp;
  const launch = new URLSearchParams(location.hash.slice(1));
  const initData = (tg && tg.initData) || launch.get('tgWebAppData') || '';
  const inTelegram = !!(tg && tg.initData && tg.platform && tg.platform !== 'unknown');
  const LIVE_MS = 4000;
  const $ = (sel) => document.querySelector(sel);
  let session = null;
  let texts = {};
  // The language picked on the page, kept in the browser (where it may).
  const stored = {
    get() { try { return localStorage.getItem('shop.console.lang') || ''; } catch (_) { return ''; } },
    set(v) { try { localStorage.setItem('shop.console.lang', v); } catch (_) { /* not kept: fine */ } },
  };
  let lang = stored.get();
  let tab = '';
  let drawn = 0; // a late answer checks it is still for the screen shown
  let seenTop = 0; // the newest order id the page has shown
  let liveTimer = 0;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k in e && !k.startsWith('data') && !k.startsWith('aria')) e[k] = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  // T is the page's text of key, its {name} placeholders filled from vars.
  function T(key, vars) {
    let s = texts[key] || key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split('{' + k + '}').join(String(v));
    return s;
  }

  // A staff member's roles ("owner", "support+accountant") in the page's
  // language.
  const roleText = (role) => String(role || '').split('+').map((r) => T('console.role.' + r)).join(' + ');
  const statusText = (s) => (texts['ao.status.' + s] ? T('ao.status.' + s) : s);
  const viaText = (v) => (texts['console.via.' + v] ? T('console.via.' + v) : v);
  const lineText = (name) => { const l = session && session.lines.find((x) => x.name === name); return l ? l.label : name; };
  // An audit target ("order 12", "buyer 5001", "promo SPRING") in words.
  const targetText = (t) => {
    const [kind, ...rest] = String(t || '').split(' ');
    return texts['console.target.' + kind] ? T('console.target.' + kind, { id: rest.join(' ') }) : t;
  };
  const actionText = (a) => (texts['console.audit.' + a] ? T('console.audit.' + a) : a);

  function applyTheme() {
    let params = null;
    try { params = JSON.parse(launch.get('tgWebAppThemeParams') || 'null'); } catch (_) { params = null; }
    if (!inTelegram && params) {
      for (const [k, v] of Object.entries(params)) {
        if (/^[a-z_]+$/.test(k) && /^#[0-9a-fA-F]{3,8}$/.test(v)) {
          document.documentElement.style.setProperty('--tg-theme-' + k.replace(/_/g, '-'), v);
        }
      }
    }
    const bg = (inTelegram && tg.themeParams && tg.themeParams.bg_color) || (params && params.bg_color) || '';
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(bg);
    const dark = m ? (parseInt(m[1], 16) * 299 + parseInt(m[2], 16) * 587 + parseInt(m[3], 16) * 114) / 1000 < 128
      : window.matchMedia('(prefers-color-scheme: dark)').matches;
    document.documentElement.classList.toggle('dark', dark);
  }

  class APIError extends Error {
    constructor(status, info) { super(info.message || 'HTTP ' + status); this.status = status; this.info = info; }
  }

  async function api(method, path, body) {
    const headers = { 'X-Telegram-Init-Data': initData };
    if (lang) headers['X-Shop-Lang'] = lang;
    const form = body instanceof FormData;
    if (body && !form) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch('api/' + path, { method, headers, body: body ? (form ? body : JSON.stringify(body)) : undefined });
    } catch (_) {
      throw new APIError(0, { code: 'offline', message: T('console.offline') });
    }
    let data = null;
    try { data = await res.json(); } catch (_) { data = null; }
    if (!res.ok) throw new APIError(res.status, (data && data.error) || { code: 'error', message: 'HTTP ' + res.status });
    return data;
  }

  function notice(text, isError) {
    const n = $('#notice');
    n.textContent = text;
    n.className = isError ? 'error' : '';
    n.hidden = !text;
  }

  const may = (endpoint) => !!session && session.endpoints.includes(endpoint);

  // act runs an action and shows its outcome; a refusal is shown as the
  // server words it.
  async function act(what, fn, after) {
    try {
      await fn();
      notice(T('console.done', { what }));
      if (after) after();
    } catch (e) {
      notice(T('console.failed', { what, error: e.message }), true);
    }
  }

  const fmtTime = (s) => (s ? new Date(s).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '');

  // --- tabs ---
  const TABS = [
    { id: 'orders', need: 'GET orders', draw: drawOrders },
    { id: 'tickets', need: 'GET tickets', draw: drawTickets },
    { id: 'books', need: 'GET books/figures', draw: drawBooks },
    { id: 'charges', need: 'GET charges', draw: drawCharges },
    { id: 'growth', need: 'GET promos', draw: drawGrowth },
    { id: 'wallet', need: 'POST credit', draw: drawCredit },
    { id: 'audit', need: 'GET audit', draw: drawAudit },
  ];

  function drawTabs() {
    const nav = $('#tabs');
    nav.replaceChildren(...TABS.filter((t) => may(t.need)).map((t) =>
      el('button', { type: 'button', 'data-tab': t.id, 'aria-pressed': String(t.id === tab), onclick: () => { if (t.id === 'orders') orderQuery = {}; if (t.id === 'charges') chargesPage = 1; show(t.id); } },
        T('console.tab.' + t.id), el('span', { class: 'badge', id: 'badge-' + t.id, hidden: true }))));
  }

  function show(id, arg) {
    tab = id;
    notice('');
    drawTabs();
    const t = TABS.find((x) => x.id === id);
    drawn++;
    $('#view').replaceChildren();
    if (t) t.draw(arg);
  }

  function view(...children) {
    $('#view').replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  }

  // --- orders ---
  let orderQuery = {};

  function orderItem(o) {
    return el('button', { class: 'item', type: 'button', 'data-ref': o.ref, onclick: () => drawOrder(o.ref) },
      '#' + o.id + ' · ' + o.item,
      el('small', { text: [statusText(o.status), o.paid, T('console.orders.buyer_n', { buyer: o.buyer }) + (o.username ? ' @' + o.username : ''),
        o.upstream ? T('console.orders.upstream_n', { number: o.upstream }) : '', fmtTime(o.created)].filter(Boolean).join(' · ') }));
  }

  async function drawOrders() {
    const me = ++drawn;
    const q = el('input', { id: 'q', placeholder: T('console.orders.q'), 'aria-label': T('console.orders.q'), value: orderQuery.q || '' });
    const buyer = el('input', { id: 'buyer', placeholder: T('console.orders.buyer'), 'aria-label': T('console.orders.buyer'), value: orderQuery.buyer || '' });
    const status = el('select', { id: 'status', 'aria-label': T('console.orders.status') }, el('option', { value: '', text: T('console.orders.any_status') }),
      session.statuses.map((s) => el('option', { value: s, text: statusText(s), selected: orderQuery.status === s })));
    const line = el('select', { id: 'line', 'aria-label': T('console.orders.line') }, el('option', { value: '', text: T('console.orders.any_line') }),
      session.lines.map((l) => el('option', { value: l.name, text: l.label, selected: orderQuery.line === l.name })));
    const from = el('input', { id: 'from', type: 'date', 'aria-label': T('console.orders.from'), title: T('console.orders.from'), value: orderQuery.from || '' });
    const to = el('input', { id: 'to', type: 'date', 'aria-label': T('console.orders.to'), title: T('console.orders.to'), value: orderQuery.to || '' });
    const list = el('div', { class: 'list', id: 'orders' });
    const search = (ev) => {
      if (ev) ev.preventDefault();
      orderQuery = { q: q.value.trim(), buyer: buyer.value.trim(), status: status.value, line: line.value, from: from.value, to: to.value };
      load();
    };
    const form = el('form', { class: 'form', onsubmit: search }, q, buyer, status, line, from, to, el('button', { class: 'btn', type: 'submit', id: 'search', text: T('console.orders.search') }));
    view(form, list);
    async function load() {
      const params = new URLSearchParams(Object.entries(orderQuery).filter(([, v]) => v));
      try {
        const r = await api('GET', 'orders?' + params);
        if (me !== drawn) return;
        const none = r.unknown_username ? T('console.orders.unknown_username', { name: r.unknown_username }) : T('console.orders.none');
        list.replaceChildren(...(r.orders.length ? r.orders.map(orderItem) : [el('p', { class: 'hint', id: 'orders-none', text: none })]));
        if (r.orders.length) seenTop = Math.max(seenTop, ...r.orders.map((o) => o.id));
      } catch (e) { notice(e.message, true); }
    }
    load();
  }

  async function drawOrder(ref) {
    const me = ++drawn;
    let r;
    try { r = await api('GET', 'orders/' + encodeURIComponent(ref)); } catch (e) { notice(e.message, true); return; }
    if (me !== drawn) return;
    const o = r.order;
    const kv = (pairs) => el('dl', { class: 'kv' }, pairs.filter(([, v]) => v !== undefined && v !== '' && v !== null).map(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]));
    const fields = Object.entries(r.fields || {}).map(([k, v]) => [k, v]);
    const actions = el('div', { class: 'form', id: 'actions' });
    const again = () => drawOrder(ref);
    const adoptPanel = el('section', { id: 'adopt', hidden: true });
    for (const a of r.actions || []) {
      const label = T('console.act.' + a);
      actions.append(el('button', {
        class: 'btn' + (a === 'refund' ? ' danger' : ''), type: 'button', 'data-action': a, text: label,
        onclick: () => {
          if (a === 'adopt') { drawAdopt(adoptPanel, o, r, again); return; }
          if (a === 'refund' && !confirmRefund(o)) return;
          act(label, () => api('POST', 'orders/' + encodeURIComponent(ref) + '/' + a, a === 'refund' ? { from: o.status } : {}), again);
        },
      }));
    }
    let codes = null;
    if (may('GET orders/{ref}/codes') && r.codes > 0) {
      codes = el('button', { class: 'btn quiet', type: 'button', id: 'codes', text: T('console.order.codes', { n: r.codes }), onclick: async () => {
        try {
          const c = await api('GET', 'orders/' + encodeURIComponent(ref) + '/codes');
          codes.replaceWith(el('pre', { id: 'codes-list', text: c.codes.join('\n') }));
        } catch (e) { notice(e.message, true); }
      } });
    }
    view(
      el('button', { class: 'btn quiet', type: 'button', text: T('console.order.back'), onclick: () => show('orders') }),
      el('h2', { id: 'order-title', text: T('console.order.title', { id: o.id, status: statusText(o.status) }) }),
      kv([[T('console.order.item'), o.item], [T('console.order.line'), lineText(o.line)], [T('console.order.buyer'), o.buyer], [T('console.order.username'), o.username ? '@' + o.username : ''],
        [T('console.order.for'), r.for], [T('console.order.quantity'), r.quantity], ...fields,
        [T('console.order.paid'), o.paid + ' (' + T('console.pay.' + r.pay_method) + ')'], [T('console.order.charge'), r.charge],
        [T('console.order.price'), '$' + r.shop_usd], [T('console.order.upstream_price'), '$' + r.upstream_usd],
        [T('console.order.promo'), r.promo ? r.promo.code + ' (−$' + r.promo.discount + ')' : ''],
        [T('console.order.upstream'), o.upstream ? '#' + o.upstream + ' ' + (r.upstream_status || '') : ''],
        [T('console.order.charged'), r.charged_usd ? '$' + r.charged_usd : ''], [T('console.order.margin'), r.margin_usd ? '$' + r.margin_usd : ''],
        [T('console.order.reason'), r.reason], [T('console.order.created'), fmtTime(o.created)]]),
      actions, adoptPanel, codes,
      el('h2', { text: T('console.order.timeline') }),
      el('table', { id: 'timeline' }, (r.timeline || []).map((s) => el('tr', { 'data-kind': s.kind, 'data-action': s.action },
        el('td', { text: fmtTime(s.at) }),
        el('td', { text: s.kind === 'audit' ? actionText(s.action) : statusText(s.from) + ' → ' + statusText(s.to) }),
        el('td', { text: s.kind === 'audit' ? [whoText(s.actor), s.note].filter(Boolean).join(' · ') : s.note || '' })))),
    );
  }

  // drawAdopt is the adoption of an upstream order for an order in review,
  // in two steps as in the chat: the number is checked upstream (it must
  // exist, be of the order's line and be no other order's) and shown, then
  // the owner confirms it.
  function drawAdopt(panel, o, r, after) {
    const ref = encodeURIComponent(o.ref);
    const number = el('input', { id: 'adopt-number', inputMode: 'numeric', placeholder: T('console.adopt.number'), 'aria-label': T('console.adopt.number'), value: r.adopt_number ? String(r.adopt_number) : '' });
    const confirmBox = el('div', { id: 'adopt-confirm' });
    const check = async (ev) => {
      if (ev) ev.preventDefault();
      confirmBox.replaceChildren();
      notice('');
      let c;
      try { c = await api('GET', 'orders/' + ref + '/adopt?number=' + encodeURIComponent(number.value.trim())); } catch (e) { notice(T('console.failed', { what: T('console.act.adopt'), error: e.message }), true); return; }
      confirmBox.replaceChildren(
        el('p', { id: 'adopt-what', text: T('console.adopt.confirm', { number: c.number, id: o.id, type: c.type, status: c.status, charged: '$' + c.charged_usd, created: fmtTime(c.created) }) }),
        el('p', { id: 'adopt-match', class: c.match === 'no' ? 'low' : 'hint', text: T('console.adopt.match_' + c.match) }),
        el('div', { class: 'form' },
          el('button', { class: 'btn danger', type: 'button', id: 'adopt-yes', text: T('console.adopt.yes', { number: c.number }),
            onclick: () => act(T('console.act.adopt'), () => api('POST', 'orders/' + ref + '/adopt', { number: String(c.number) }), after) }),
          el('button', { class: 'btn quiet', type: 'button', id: 'adopt-cancel', text: T('console.adopt.cancel'), onclick: () => { panel.hidden = true; } })));
    };
    panel.replaceChildren(el('h2', { text: T('console.act.adopt') }), el('p', { class: 'hint', text: T('console.adopt.ask', { id: o.id }) }),
      el('form', { class: 'form', onsubmit: check }, number, el('button', { class: 'btn', type: 'submit', id: 'adopt-check', text: T('console.adopt.check') })),
      confirmBox);
    panel.hidden = false;
    if (number.value) check();
  }

  // whoText names the staff member who acted, with their roles and where.
  const whoText = (a) => (a ? T('console.who', { id: a.id, role: roleText(a.role), via: viaText(a.via) }) : '');

  function confirmRefund(o) {
    const text = T('console.order.confirm_refund', { id: o.id, paid: o.paid });
    // Inside Telegram confirm() is not offered; the tests answer it.
    try { return window.confirm(text); } catch (_) { return true; }
  }

  // --- tickets ---
  async function drawTickets() {
    const me = ++drawn;
    let r;
    try { r = await api('GET', 'tickets'); } catch (e) { notice(e.message, true); return; }
    if (me !== drawn) return;
    view(el('div', { class: 'list', id: 'tickets' }, r.tickets.length ? r.tickets.map((t) =>
      el('button', { class: 'item' + (t.unread ? ' unread' : ''), type: 'button', 'data-buyer': t.buyer, onclick: () => drawThread(t.buyer) },
        (t.unread ? '● ' : '') + (t.name || t.buyer),
        el('small', { text: [T('console.orders.buyer_n', { buyer: t.buyer }), fmtTime(t.last),
          t.answered_by ? T('console.tickets.answered_by', { id: t.answered_by }) : T('console.tickets.not_answered')].join(' · ') })))
      : [el('p', { class: 'hint', text: T('console.tickets.none') })]));
  }

  async function drawThread(buyer) {
    const me = ++drawn;
    let r;
    try { r = await api('GET', 'tickets/' + buyer); } catch (e) { notice(e.message, true); return; }
    if (me !== drawn) return;
    const text = el('textarea', { id: 'reply-text', placeholder: T('console.ticket.answer'), 'aria-label': T('console.ticket.answer') });
    const photo = el('input', { id: 'reply-photo', type: 'file', accept: 'image/jpeg,image/png', 'aria-label': T('console.ticket.photo_pick'), title: T('console.ticket.photo_pick') });
    const send = (ev) => {
      ev.preventDefault();
      let body = { text: text.value };
      const file = photo.files && photo.files[0];
      if (file) {
        body = new FormData();
        body.append('text', text.value);
        body.append('photo', file, file.name);
      }
      act(T('console.act.answer'), () => api('POST', 'tickets/' + buyer + '/reply', body), () => drawThread(buyer));
    };
    view(
      el('button', { class: 'btn quiet', type: 'button', text: T('console.ticket.back'), onclick: () => show('tickets') }),
      el('h2', { text: (r.ticket.name || buyer) + ' · ' + (r.ticket.open ? T('console.ticket.open') : T('console.ticket.closed')) }),
      el('div', { class: 'list', id: 'thread' }, r.messages.map((m) => el('div', { class: 'msg' + (m.from ? ' staff' : '') },
        el('small', { text: (m.from ? T('console.ticket.staff', { id: m.from }) + (m.via ? ' (' + viaText(m.via) + ')' : '') : T('console.ticket.buyer')) + ' · ' + fmtTime(m.at) }),
        m.photo_key ? threadPhoto(buyer, m.photo_key) : (m.photo ? T('console.ticket.photo') : ''),
        m.text || ''))),
      el('form', { class: 'form', onsubmit: send }, text,
        el('label', { class: 'file' }, T('console.ticket.photo_pick'), photo),
        el('p', { class: 'hint', text: T('console.ticket.photo_hint') }),
        el('button', { class: 'btn', type: 'submit', id: 'reply', text: T('console.ticket.send') }),
        r.ticket.open ? el('button', { class: 'btn quiet', type: 'button', id: 'close-ticket', text: T('console.ticket.close'),
          onclick: () => act(T('console.act.close'), () => api('POST', 'tickets/' + buyer + '/close', {}), () => show('tickets')) }) : null),
    );
  }

  // threadPhoto is a photo of a ticket's thread: fetched from the API with
  // the page's initData (an <img> could not send it) and shown from a blob.
  function threadPhoto(buyer, key) {
    const img = el('img', { class: 'photo', alt: T('console.ticket.photo'), 'data-photo': key });
    (async () => {
      try {
        const headers = { 'X-Telegram-Init-Data': initData };
        if (lang) headers['X-Shop-Lang'] = lang;
        const res = await fetch('api/tickets/' + buyer + '/photos/' + encodeURIComponent(key), { headers });
        if (!res.ok) throw new Error('HTTP ' + res.status);
        img.src = URL.createObjectURL(await res.blob());
      } catch (_) {
        img.replaceWith(document.createTextNode(T('console.ticket.photo')));
      }
    })();
    return img;
  }

  // --- books ---
  function svgNode(markup) {
    const doc = new DOMParser().parseFromString(markup, 'image/svg+xml');
    const root = doc.documentElement;
    if (root.nodeName !== 'svg' || root.querySelector('script')) return el('p', { class: 'hint', text: T('console.books.no_chart') });
    return document.importNode(root, true);
  }

  async function drawBooks() {
    const me = ++drawn;
    const parts = [];
    const bal = el('section', { id: 'balance' });
    const figs = el('section', { id: 'figures' });
    const rec = el('section', { id: 'reconcile' });
    const exp = el('section', { id: 'export' });
    view(bal, figs, rec, exp);
    if (may('GET books/balance')) {
      parts.push(api('GET', 'books/balance').then((b) => {
        if (me !== drawn) return;
        bal.replaceChildren(el('h2', { text: T('console.books.balance') }),
          b.upstream_usd ? el('p', { id: 'upstream-balance', class: b.low ? 'low' : '', text: b.low ? T('console.books.low', { amount: '$' + b.upstream_usd, below: '$' + b.low_below }) : '$' + b.upstream_usd })
            : el('p', { class: 'low', text: T('console.books.unavailable', { error: b.upstream_error }) }),
          el('pre', { id: 'balance-report', text: b.report }));
      }));
    }
    parts.push(api('GET', 'books/figures?days=30').then((f) => {
      if (me !== drawn) return;
      const t = f.total;
      const cols = ['orders', 'revenue', 'cost', 'margin', 'discounts'];
      const row = (name, x) => el('tr', {}, el('td', { text: name }), cols.map((k) => el('td', { class: 'n', text: String(x[k]) })));
      figs.replaceChildren(el('h2', { text: T('console.books.days', { from: f.from }) }),
        el('table', { id: 'totals' }, el('tr', {}, el('th', { text: '' }), cols.map((h) => el('th', { class: 'n', text: T('console.books.col.' + h) }))),
          row(T('console.books.all'), t), Object.entries(f.lines).map(([k, v]) => row(lineText(k), v))),
        el('p', { class: 'hint', id: 'money-in', text: T('console.books.money_in', { referrals: '$' + t.referrals, topups: '$' + t.topups }) }),
        ...f.charts.map((c) => el('figure', { id: 'chart-' + c.id }, el('figcaption', { class: 'hint', text: c.title }), svgNode(c.svg))));
    }));
    const win = el('input', { id: 'rec-window', placeholder: T('console.books.window'), 'aria-label': T('console.books.window'), value: '24h' });
    const out = el('pre', { id: 'rec-report', hidden: true });
    rec.append(el('h2', { text: T('console.books.reconcile') }), el('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      try { const r = await api('GET', 'books/reconcile?window=' + encodeURIComponent(win.value)); out.textContent = r.report; out.hidden = false; } catch (e) { notice(e.message, true); }
    } }, win, el('button', { class: 'btn', type: 'submit', id: 'rec-run', text: T('console.books.reconcile_run') })), out);
    if (may('POST books/export')) {
      const arg = el('input', { id: 'export-arg', value: 'orders 30d', placeholder: T('console.books.export_arg'), 'aria-label': T('console.books.export_arg') });
      const linkBox = el('p', { id: 'export-link' });
      exp.append(el('h2', { text: T('console.books.export') }), el('form', { class: 'form', onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          const r = await api('POST', 'books/export', { arg: arg.value });
          linkBox.replaceChildren(el('a', { href: r.url, download: '', id: 'export-download', text: T('console.books.download') }));
        } catch (e) { notice(e.message, true); }
      } }, arg, el('button', { class: 'btn', type: 'submit', id: 'export-make', text: T('console.books.make_link') })), linkBox);
    }
    try { await Promise.all(parts); } catch (e) { notice(e.message, true); }
  }

  // --- charges for review ---
  let chargesPage = 1;
  let chargesShown = -1; // how many wait, as the Charges page shows it

  // drawCharges is the chat's /charges: the Star payments waiting for
  // review, oldest first, a page at a time, with the totals; an owner
  // refunds one or marks it settled, each after a confirmation.
  async function drawCharges(page) {
    const me = ++drawn;
    if (page) chargesPage = page;
    let r;
    try { r = await api('GET', 'charges?page=' + chargesPage); } catch (e) { notice(e.message, true); return; }
    if (me !== drawn) return;
    chargesPage = r.page;
    chargesShown = r.waiting.n;
    const sum = (key, x) => T(key, { n: x.n, stars: x.stars_text, usd: x.usd_text });
    const nav = r.pages > 1 ? el('div', { class: 'form', id: 'charges-nav' },
      el('button', { class: 'btn quiet', type: 'button', id: 'charges-prev', disabled: r.page <= 1, text: T('console.charges.prev'), onclick: () => drawCharges(r.page - 1) }),
      el('span', { class: 'hint', id: 'charges-page', text: T('console.charges.page', { page: r.page, pages: r.pages }) }),
      el('button', { class: 'btn quiet', type: 'button', id: 'charges-next', disabled: r.page >= r.pages, text: T('console.charges.next'), onclick: () => drawCharges(r.page + 1) })) : null;
    view(
      el('h2', { text: T('console.charges.title') }),
      el('p', { id: 'charges-waiting', text: sum('console.charges.waiting', r.waiting) }),
      r.refunding.n ? el('p', { id: 'charges-refunding', class: 'hint', text: sum('console.charges.refunding', r.refunding) }) : null,
      r.waiting.n ? el('p', { class: 'hint', text: r.hint }) : null,
      el('div', { class: 'list', id: 'charges' }, r.charges.length ? r.charges.map((c) => chargeItem(c, r.actions))
        : [el('p', { class: 'hint', id: 'charges-none', text: T('console.charges.none') })]),
      nav);
  }

  // chargeItem is a charge as /charges shows it, with the actions the
  // user may take; each asks first, in place.
  function chargeItem(c, actions) {
    const buttons = el('div', { class: 'form charge-actions' });
    const ask = el('div', { class: 'charge-confirm', hidden: true });
    for (const a of actions) {
      buttons.append(el('button', { class: 'btn' + (a === 'refund' ? ' danger' : ' quiet'), type: 'button', 'data-action': a, text: T('console.charges.' + a),
        onclick: () => {
          buttons.hidden = true;
          ask.replaceChildren(el('p', { class: 'charge-question', text: T('console.charges.confirm_' + a, { stars: c.stars_text, user: c.buyer }) }),
            el('div', { class: 'form' },
              el('button', { class: 'btn' + (a === 'refund' ? ' danger' : ''), type: 'button', 'data-confirm': a, text: T('console.charges.yes_' + a, { stars: c.stars_text }),
                onclick: (ev) => { ev.currentTarget.disabled = true; resolveCharge(c, a); } }),
              el('button', { class: 'btn quiet', type: 'button', 'data-cancel': a, text: T('console.charges.cancel'), onclick: () => { ask.hidden = true; buttons.hidden = false; } })));
          ask.hidden = false;
        } }));
    }
    return el('div', { class: 'item charge', 'data-charge': c.charge },
      el('code', { class: 'charge-id', text: c.charge }),
      el('small', { text: [c.stars_text + ' (≈ ' + c.usd_text + ')', T('console.orders.buyer_n', { buyer: c.buyer }) + (c.username ? ' @' + c.username : ''),
        T('console.charges.paid', { date: fmtTime(c.paid) })].join(' · ') }),
      el('small', { text: T('console.charges.why', { why: c.why }) }),
      c.item ? el('small', { class: 'charge-item', text: c.line_label + ': ' + c.item }) : null,
      actions.length ? buttons : null, ask);
  }

  // resolveCharge sends a confirmed decision and shows what came of it, as
  // the server words it: done, resolved before by someone else, or an
  // order the payment has by now (with a way to it); the list is read
  // again.
  async function resolveCharge(c, a) {
    let said = '';
    let bad = false;
    let order = '';
    try {
      const r = await api('POST', 'charges/' + encodeURIComponent(c.charge) + '/' + a, {});
      said = r.message;
      bad = r.done === 'refund_later';
    } catch (e) {
      const known = e.info && ['resolved_before', 'has_order', 'not_listed'].includes(e.info.code);
      said = known ? e.message : T('console.failed', { what: T('console.charges.' + a), error: e.message });
      bad = !known;
      order = (e.info && e.info.order) || '';
    }
    await drawCharges();
    notice(said, bad);
    if (order && may('GET orders/{ref}')) {
      $('#notice').append(' ', el('button', { class: 'btn quiet', type: 'button', id: 'charge-order', text: T('console.charges.open_order'), onclick: () => drawOrder(order) }));
    }
  }

  // --- growth ---
  async function drawGrowth() {
    const me = ++drawn;
    const promos = el('section', { id: 'promos' });
    const refs = el('section', { id: 'referrals' });
    const bc = el('section', { id: 'broadcast' });
    view(promos, refs, bc);
    const loadPromos = async () => {
      const r = await api('GET', 'promos');
      if (me !== drawn) return;
      const spec = el('input', { id: 'promo-spec', placeholder: T('console.promos.spec'), 'aria-label': T('console.promos.spec') });
      promos.replaceChildren(el('h2', { text: T('console.promos.title', { n: r.total }) }),
        el('form', { class: 'form', onsubmit: (ev) => { ev.preventDefault(); act(T('console.act.promo_add'), () => api('POST', 'promos', { spec: spec.value }), loadPromos); } },
          spec, el('button', { class: 'btn', type: 'submit', id: 'promo-add', text: T('console.promos.add') })),
        el('table', { id: 'promo-list' }, el('tr', {}, ['code', 'discount', 'uses', 'until'].map((h) => el('th', { text: T('console.promos.col.' + h) })), el('th', { text: '' })),
          r.promos.map((p) => el('tr', { 'data-code': p.code }, el('td', { text: p.code + (p.disabled ? ' ' + T('console.promos.disabled') : '') }),
            el('td', { text: p.percent ? p.percent + '%' : '$' + p.off_usd }),
            el('td', { class: 'n', text: p.used + (p.max_uses ? ' / ' + p.max_uses : '') + (p.held ? ' ' + T('console.promos.held', { n: p.held }) : '') }),
            el('td', { text: p.expires ? p.expires.slice(0, 10) : '' }),
            el('td', {}, p.disabled ? null : el('button', { class: 'btn quiet', type: 'button', text: T('console.promos.disable'),
              onclick: () => act(T('console.act.promo_disable', { code: p.code }), () => api('POST', 'promos/' + encodeURIComponent(p.code) + '/disable', {}), loadPromos) }))))));
    };
    const loadRefs = async () => {
      if (!may('GET referrals')) return;
      const r = await api('GET', 'referrals');
      if (me !== drawn) return;
      refs.replaceChildren(el('h2', { text: T('console.refs.title') }), r.on ? el('table', {}, el('tr', {}, el('th', { text: '' }), ['joined', 'rewards', 'usd'].map((h) => el('th', { text: T('console.refs.col.' + h) }))),
        ['today', 'week', 'month'].map((k) => el('tr', {}, el('td', { text: T('console.refs.' + k) }), el('td', { class: 'n', text: r[k].joined }), el('td', { class: 'n', text: r[k].rewards }), el('td', { class: 'n', text: '$' + r[k].usd }))))
        : el('p', { class: 'hint', text: T('console.refs.off') }));
    };
    const loadBroadcasts = () => drawBroadcast(bc, me);
    try { await Promise.all([loadPromos(), loadRefs(), loadBroadcasts()]); } catch (e) { notice(e.message, true); }
  }

  // --- broadcast ---
  // The audiences the server takes (state.ParseAudience), in the order
  // the chat offers them.
  const AUDIENCES = ['all', 'lang', 'line', 'recent', 'inactive', 'wallet', 'never', 'referred'];
  const MAX_BUTTONS = 3;
  const langName = (code) => { const l = session && session.langs.find((x) => x.code === code); return l ? l.name : code; };
  // audienceText is an audience as the server writes it ("line:giftcards")
  // in the page's words.
  const audienceText = (a) => {
    const [kind, arg] = String(a || 'all').split(':');
    if (!texts['console.bc.aud.' + kind]) return a;
    return T('console.bc.aud.' + kind, { lang: langName(arg), line: lineText(arg), n: arg });
  };
  // The admin's own time: a scheduled broadcast is entered and shown in
  // the browser's time zone and sent to the server in UTC.
  const timeZone = () => { try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ''; } catch (_) { return ''; } };
  const pad = (n) => String(n).padStart(2, '0');
  const fmtLocal = (s) => {
    if (!s) return '';
    const d = new Date(s);
    if (isNaN(d.getTime())) return s;
    const off = -d.getTimezoneOffset();
    const zone = timeZone() || 'UTC' + (off < 0 ? '−' : '+') + pad(Math.floor(Math.abs(off) / 60)) + ':' + pad(Math.abs(off) % 60);
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' + pad(d.getMinutes()) + ' (' + zone + ')';
  };
  // utcOf is a datetime-local value (the admin's wall clock) as RFC 3339 in
  // UTC; what cannot be read goes as it is, for the server to refuse.
  const utcOf = (v) => { const d = new Date(v); return isNaN(d.getTime()) ? v : d.toISOString().slice(0, 19) + 'Z'; };

  // drawBroadcast is the broadcast composer (text, audience with its live
  // size, buttons, time; a preview to confirm) and the list of running,
  // scheduled and recent broadcasts with their results. The form is drawn
  // once: a refusal is shown beside it and what was typed stays.
  async function drawBroadcast(bc, me) {
    if (!may('GET broadcasts')) return;
    let watching = '';
    let sizeSeq = 0;
    let reach = null; // the last size the server gave for the audience
    let refresh = 0;
    const text = el('textarea', { id: 'bc-text', placeholder: T('console.bc.text'), 'aria-label': T('console.bc.text') });
    const kind = el('select', { id: 'bc-audience', 'aria-label': T('console.bc.audience') },
      AUDIENCES.map((k) => el('option', { value: k, text: T('console.bc.kind.' + k) })));
    const langSel = el('select', { id: 'bc-lang', 'aria-label': T('console.bc.pick_lang'), hidden: true },
      session.langs.map((l) => el('option', { value: l.code, text: l.name })));
    const lineSel = el('select', { id: 'bc-line', 'aria-label': T('console.bc.pick_line'), hidden: true },
      session.lines.map((l) => el('option', { value: l.name, text: l.label })));
    const days = el('input', { id: 'bc-days', type: 'number', min: '1', max: '3650', value: '30', hidden: true,
      'aria-label': T('console.bc.days'), title: T('console.bc.days') });
    const sizeLine = el('p', { class: 'hint', id: 'bc-reach' });
    const rows = [];
    for (let i = 1; i <= MAX_BUTTONS; i++) {
      rows.push([
        el('input', { id: 'bc-label-' + i, placeholder: T('console.bc.button_label'), 'aria-label': T('console.bc.button_label') + ' ' + i, maxLength: 40 }),
        el('input', { id: 'bc-target-' + i, placeholder: T('console.bc.button_target'), 'aria-label': T('console.bc.button_target') + ' ' + i }),
      ]);
    }
    const at = el('input', { id: 'bc-at', type: 'datetime-local', 'aria-label': T('console.bc.at'), title: T('console.bc.at') });
    const error = el('p', { id: 'bc-error', class: 'low', role: 'alert', hidden: true });
    const confirmBox = el('div', { id: 'bc-confirm', hidden: true });
    const list = el('div', { class: 'list', id: 'bc-list' });
    const total = el('p', { class: 'hint', id: 'bc-buyers' });

    const audience = () => {
      switch (kind.value) {
        case 'lang': return 'lang:' + langSel.value;
        case 'line': return 'line:' + lineSel.value;
        case 'recent': case 'inactive': return kind.value + ':' + days.value.trim();
        default: return kind.value;
      }
    };
    const buttons = () => rows.map(([l, t]) => [l.value.trim(), t.value.trim()]).filter(([l, t]) => l || t)
      .map(([label, target]) => (/^https?:\/\//i.test(target) ? { label, url: target } : { label, link: target }));
    const body = () => {
      const b = { text: text.value, audience: audience() };
      const bs = buttons();
      if (bs.length) b.buttons = bs;
      if (at.value) b.at = utcOf(at.value);
      return b;
    };
    const refuse = (msg) => { error.textContent = msg; error.hidden = !msg; };

    const drawList = (r) => {
      total.textContent = T('console.bc.reaches', { n: r.buyers });
      list.replaceChildren(...(r.broadcasts.length ? r.broadcasts.map((b) => el('div', { class: 'item', 'data-bc': b.id, 'data-status': b.status },
        T('console.bc.row', { id: b.id, status: texts['console.bc.status.' + b.status] ? T('console.bc.status.' + b.status) : b.status, done: b.done, total: b.total }),
        el('small', { class: 'bc-who', text: audienceText(b.audience) + (b.at ? ' · ' + T('console.bc.at_row', { at: fmtLocal(b.at) }) : '') }),
        b.status === 'scheduled' ? null : el('small', { class: 'bc-counts', text: T('console.bc.counts', { sent: b.sent, blocked: b.blocked, failed: b.failed, skipped: b.skipped_optout, opens: b.opens }) }),
        b.status === 'running' || b.status === 'scheduled' ? el('button', { class: 'btn quiet', type: 'button', 'data-stop': b.id,
          text: T(b.status === 'running' ? 'console.bc.stop' : 'console.bc.cancel'),
          onclick: () => act(T(b.status === 'running' ? 'console.bc.stop' : 'console.bc.cancel'), () => api('POST', 'broadcasts/' + encodeURIComponent(b.id) + '/stop', {}), load) }) : null))
        : [el('p', { class: 'hint', text: T('console.bc.none') })]));
      // A running broadcast's figures are read again until it ends.
      clearTimeout(refresh);
      if (r.broadcasts.some((b) => b.status === 'running')) refresh = setTimeout(() => { if (me === drawn) load(); }, 1500);
    };
    const load = async () => {
      const r = await api('GET', 'broadcasts' + (watching ? '?id=' + encodeURIComponent(watching) : ''));
      if (me !== drawn) return;
      drawList(r);
    };
    // size asks the server how many buyers the audience reaches now.
    const size = async () => {
      const seq = ++sizeSeq;
      langSel.hidden = kind.value !== 'lang';
      lineSel.hidden = kind.value !== 'line';
      days.hidden = kind.value !== 'recent' && kind.value !== 'inactive';
      confirmBox.hidden = true;
      reach = null;
      sizeLine.textContent = '';
      try {
        const r = await api('GET', 'broadcasts?audience=' + encodeURIComponent(audience()) + (watching ? '&id=' + encodeURIComponent(watching) : ''));
        if (seq !== sizeSeq || me !== drawn) return;
        refuse('');
        reach = r.audience;
        sizeLine.textContent = T('console.bc.audience_size', { name: r.audience.name, n: r.audience.reach, members: r.audience.members,
          optout: r.audience.skipped_optout, blocked: r.audience.blocked });
        drawList(r);
      } catch (e) {
        if (seq === sizeSeq && me === drawn) refuse(e.message);
      }
    };
    for (const x of [kind, langSel, lineSel]) x.addEventListener('change', size);
    days.addEventListener('input', size);

    // preview shows the message as buyers get it, with what it reaches and
    // when, to confirm.
    const preview = (ev) => {
      ev.preventDefault();
      refuse('');
      const b = body();
      if (!b.text.trim()) { refuse(T('console.bc.no_text')); return; }
      const when = at.value ? T('console.bc.when_at', { at: fmtLocal(at.value) }) : T('console.bc.when_now');
      confirmBox.replaceChildren(
        el('h2', { text: T('console.bc.preview') }),
        el('div', { class: 'msg bc-msg', id: 'bc-preview' }, el('div', { class: 'bc-text', text: b.text }),
          (b.buttons || []).map((x) => el('div', { class: 'bc-button', title: x.url || x.link, text: x.label }))),
        el('p', { id: 'bc-summary', text: [reach ? T('console.bc.audience_size', { name: reach.name, n: reach.reach, members: reach.members, optout: reach.skipped_optout, blocked: reach.blocked }) : audienceText(b.audience), when].join(' · ') }),
        el('div', { class: 'form' },
          el('button', { class: 'btn', type: 'button', id: 'bc-confirm-send', text: T(b.at ? 'console.bc.schedule' : 'console.bc.send_now'), onclick: send }),
          el('button', { class: 'btn quiet', type: 'button', id: 'bc-edit', text: T('console.bc.edit'), onclick: () => { confirmBox.hidden = true; text.focus(); } })));
      confirmBox.hidden = false;
      confirmBox.scrollIntoView({ block: 'nearest' });
    };
    const send = async () => {
      const what = T('console.act.broadcast');
      try {
        const s = await api('POST', 'broadcasts', body());
        watching = s.id;
        confirmBox.hidden = true;
        text.value = '';
        at.value = '';
        for (const [l, t] of rows) { l.value = ''; t.value = ''; }
        notice(T('console.done', { what }));
        await load();
      } catch (e) {
        confirmBox.hidden = true;
        refuse(T('console.failed', { what, error: e.message }));
      }
    };

    bc.replaceChildren(el('h2', { text: T('console.bc.title') }), total,
      el('form', { class: 'form', id: 'bc-form', noValidate: true, onsubmit: preview }, text,
        el('label', { class: 'field' }, T('console.bc.audience'), kind), langSel, lineSel, days, sizeLine,
        el('p', { class: 'hint', text: T('console.bc.buttons_hint') }),
        rows.map(([l, t]) => el('div', { class: 'pair' }, l, t)),
        el('label', { class: 'field' }, T('console.bc.at_label', { zone: timeZone() || 'UTC' }), at),
        el('p', { class: 'hint', text: T('console.bc.at_hint') }),
        error,
        el('button', { class: 'btn', type: 'submit', id: 'bc-send', text: T('console.bc.send') })),
      confirmBox, el('h2', { text: T('console.bc.list') }), list);
    await size();
  }

  // --- wallet credit ---
  function drawCredit() {
    let ref = '';
    const user = el('input', { id: 'credit-user', placeholder: T('console.credit.user'), 'aria-label': T('console.credit.user'), inputMode: 'numeric' });
    const amount = el('input', { id: 'credit-amount', placeholder: T('console.credit.amount'), 'aria-label': T('console.credit.amount') });
    const out = el('p', { id: 'credit-result' });
    view(el('h2', { text: T('console.credit.title') }), el('form', { class: 'form', onsubmit: (ev) => {
      ev.preventDefault();
      act(T('console.credit.send'), async () => {
        const r = await api('POST', 'credit', { user: Number(user.value), amount: amount.value, ref });
        ref = r.ref; // a retry of this form credits once
        out.textContent = T('console.credit.balance', { balance: '$' + r.balance }) + (r.replay ? ' ' + T('console.credit.replay') : '');
      });
    } }, user, amount, el('button', { class: 'btn', type: 'submit', id: 'credit-send', text: T('console.credit.send') })), out);
  }

  // --- audit ---
  async function drawAudit() {
    const me = ++drawn;
    let r;
    try { r = await api('GET', 'audit?n=200'); } catch (e) { notice(e.message, true); return; }
    if (me !== drawn) return;
    view(el('table', { id: 'audit' }, el('tr', {}, ['when', 'who', 'what', 'on', 'from'].map((h) => el('th', { text: T('console.audit.col.' + h) })), el('th', { text: '' })),
      r.entries.map((a) => el('tr', { 'data-action': a.action }, el('td', { text: fmtTime(a.at) }), el('td', { text: a.actor.id + ' (' + roleText(a.actor.role) + ')' }),
        el('td', { text: actionText(a.action) }), el('td', { text: targetText(a.target) }), el('td', { text: viaText(a.actor.via) }), el('td', { text: a.detail || '' })))));
  }

  // --- live ---
  async function poll() {
    try {
      const r = await api('GET', 'live');
      const newest = r.orders.length ? r.orders[0].id : 0;
      const fresh = seenTop ? r.orders.filter((o) => o.id > seenTop).length : 0;
      if (!seenTop) seenTop = newest;
      const ob = $('#badge-orders');
      if (ob) { ob.textContent = String(fresh); ob.hidden = fresh === 0; }
      if (fresh && tab === 'orders' && !Object.values(orderQuery).some(Boolean)) {
        const list = $('#orders');
        if (list) {
          for (const o of r.orders.filter((x) => x.id > seenTop).reverse()) list.prepend(orderItem(o));
          seenTop = newest;
          if (ob) ob.hidden = true;
        }
      }
      const tb = $('#badge-tickets');
      if (tb && r.unread !== undefined) { tb.textContent = String(r.unread); tb.hidden = !r.unread; }
      if (tab === 'tickets' && r.unread && !$('#thread')) drawTickets();
      const cb = $('#badge-charges');
      if (cb && r.charges !== undefined) { cb.textContent = String(r.charges); cb.hidden = !r.charges; }
      // The list follows the count, but not under an open confirmation.
      if (tab === 'charges' && r.charges !== undefined && r.charges !== chargesShown && $('#charges') && !$('#charges .charge-confirm:not([hidden])')) drawCharges();
    } catch (_) { /* the next poll tries again */ }
    liveTimer = setTimeout(poll, LIVE_MS);
  }

  // useSession takes the session's language and texts for the page.
  function useSession() {
    texts = session.texts || {};
    lang = session.lang;
    document.documentElement.lang = lang;
    document.title = T('console.title');
    $('#title').textContent = T('console.title');
    $('#tabs').setAttribute('aria-label', T('console.sections'));
    $('#lang').setAttribute('aria-label', T('console.language'));
    $('#who').textContent = (session.user.name || session.user.id) + ' · ' + roleText(session.role);
  }

  async function start() {
    applyTheme();
    if (tg && tg.ready) tg.ready();
    if (!initData) { notice('This page opens from the shop\'s bot in Telegram.', true); return; }
    try {
      session = await api('GET', 'session');
    } catch (e) {
      notice(e.message, true);
      document.body.dataset.ready = 'refused';
      return;
    }
    useSession();
    const sel = $('#lang');
    sel.replaceChildren(...session.langs.map((l) => el('option', { value: l.code, text: l.name, selected: l.code === lang })));
    sel.hidden = session.langs.length < 2;
    sel.onchange = async () => {
      lang = sel.value;
      stored.set(lang);
      try { session = await api('GET', 'session'); } catch (e) { notice(e.message, true); return; }
      useSession();
      show(tab || 'orders');
    };
    const first = TABS.find((t) => may(t.need));
    show(first ? first.id : 'audit');
    document.body.dataset.ready = 'yes';
    clearTimeout(liveTimer);
    liveTimer = setTimeout(poll, LIVE_MS);
  }
  start();
})();
