// The shop's Mini App: plain DOM, no framework, no build step. Every call
// goes to the shop's API (api/ beside this page) with the initData Telegram
// gave the page; the server checks it, the catalog, the fields and the
// prices, and makes the order only from the payment's own update. What the
// page shows it builds with textContent, never as markup.
'use strict';
(() => {
  const tg = window.Telegram && window.Telegram.WebApp;
  // Outside Telegram (the demo, the browser tests) the launch parameters
  // are read from the URL's fragment, where Telegram puts them too.
  const launch = new URLSearchParams(location.hash.slice(1));
  const initData = (tg && tg.initData) || launch.get('tgWebAppData') || '';
  // Telegram's script also reads the fragment, so only a known platform
  // means the page runs inside a Telegram client.
  const inTelegram = !!(tg && tg.initData && tg.platform && tg.platform !== 'unknown');
  const POLL_MS = 1000;

  let texts = {};
  let session = null;
  // The language picked on the page, kept in the browser (where it may).
  const stored = {
    get() { try { return localStorage.getItem('shop.lang') || ''; } catch (_) { return ''; } },
    set(v) { try { localStorage.setItem('shop.lang', v); } catch (_) { /* not kept: fine */ } },
  };
  let lang = stored.get();
  const stack = []; // the screens, each a function that draws itself
  let drawn = 0; // counts draws: a screen's late answer or poll checks it is still shown

  const $ = (sel) => document.querySelector(sel);

  // el builds an element: attrs sets properties (class, text, on*, data-*,
  // anything else as an attribute); children are nodes or strings (text).
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
    for (const c of children.flat()) {
      if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }

  // T is the page's text of key, its {name} placeholders filled from vars.
  function T(key, vars) {
    let s = texts[key] || key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split('{' + k + '}').join(String(v));
    return s;
  }

  function applyTheme() {
    let params = null;
    try { params = JSON.parse(launch.get('tgWebAppThemeParams') || 'null'); } catch (_) { params = null; }
    if (inTelegram || !params) return; // Telegram's script sets the variables itself
    for (const [k, v] of Object.entries(params)) {
      if (/^[a-z_]+$/.test(k) && /^#[0-9a-fA-F]{3,8}$/.test(v)) {
        document.documentElement.style.setProperty('--tg-theme-' + k.replace(/_/g, '-'), v);
      }
    }
  }

  class APIError extends Error {
    constructor(status, info) { super(info.message || 'HTTP ' + status); this.status = status; this.info = info; }
  }

  async function api(method, path, body) {
    const headers = { 'X-Telegram-Init-Data': initData };
    if (lang) headers['X-Shop-Lang'] = lang;
    if (body) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch('api/' + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
    } catch (_) {
      throw new APIError(0, { code: 'offline', message: T('webapp.offline') });
    }
    let data = {};
    try { data = await res.json(); } catch (_) { data = {}; }
    if (!res.ok) {
      const err = new APIError(res.status, data.error || {});
      if (res.status === 401) fatal(err.message || T('webapp.auth_failed'));
      throw err;
    }
    return data;
  }

  // The Main button: Telegram's inside Telegram, the page's own outside.
  let mainHandler = null;
  function setMain(text, handler) {
    if (inTelegram) {
      if (mainHandler) tg.MainButton.offClick(mainHandler);
      mainHandler = handler;
      tg.MainButton.setText(text);
      tg.MainButton.onClick(handler);
      tg.MainButton.enable();
      tg.MainButton.show();
      return;
    }
    const b = $('#main');
    mainHandler = handler;
    b.textContent = text;
    b.disabled = false;
    $('#foot').hidden = false;
  }
  function hideMain() {
    if (inTelegram) {
      if (mainHandler) tg.MainButton.offClick(mainHandler);
      tg.MainButton.hide();
    } else {
      $('#foot').hidden = true;
    }
    mainHandler = null;
  }
  function busyMain(busy) {
    if (inTelegram) { busy ? tg.MainButton.showProgress() : tg.MainButton.hideProgress(); return; }
    $('#main').disabled = busy;
  }

  function notice(text) {
    const n = $('#notice');
    n.textContent = text || '';
    n.hidden = !text;
  }

  function fatal(text) {
    stack.length = 0;
    drawn++;
    hideMain();
    $('#back').hidden = true;
    if (inTelegram) tg.BackButton.hide();
    $('#screen').replaceChildren(el('p', { class: 'fatal status', text }));
  }

  // Navigation: go opens a screen, back returns, replace swaps the top one.
  function go(screen) { stack.push(screen); draw(); }
  function replace(screen) { stack.pop(); go(screen); }
  function back() { if (stack.length > 1) { stack.pop(); draw(); } }
  function home() { stack.length = 1; draw(); }

  async function draw() {
    const me = ++drawn;
    notice('');
    hideMain();
    const canBack = stack.length > 1;
    $('#back').hidden = inTelegram || !canBack;
    if (inTelegram) canBack ? tg.BackButton.show() : tg.BackButton.hide();
    const screen = $('#screen');
    screen.replaceChildren(el('p', { class: 'hint', text: T('webapp.loading') }));
    try {
      const node = await stack[stack.length - 1](me);
      if (me === drawn && node) screen.replaceChildren(node);
    } catch (err) {
      if (me !== drawn || err.status === 401) return;
      screen.replaceChildren();
      notice(err.message);
    }
  }
  const current = (me) => me === drawn;

  const priceText = (p) => p ? p.stars_text + ' · ' + p.usd_text : '';

  // A product's picture: its image from the shop (img/<key>, loaded only
  // when scrolled near), or a placeholder with its initial when it has none
  // or the image cannot be had.
  function thumb(src, name, big) {
    const ph = () => el('span', { class: 'thumb ph' + (big ? ' big' : ''), 'aria-hidden': 'true', text: (name || '?').trim().charAt(0).toUpperCase() });
    if (!src) return ph();
    const img = el('img', { class: 'thumb' + (big ? ' big' : ''), src, alt: '', loading: 'lazy', decoding: 'async', width: big ? 72 : 44, height: big ? 72 : 44 });
    img.addEventListener('error', () => img.replaceWith(ph()), { once: true });
    return img;
  }

  // The first screen: the product lines.
  async function homeScreen() {
    $('#title').textContent = T('webapp.title');
    return el('div', {},
      el('nav', { class: 'links' },
        el('button', { class: 'button quiet', type: 'button', id: 'to-orders', text: T('webapp.my_orders'), onclick: () => go(ordersScreen()) }),
        session.pay.wallet ? el('button', { class: 'button quiet', type: 'button', id: 'to-wallet', text: T('webapp.wallet'), onclick: () => go(walletScreen()) }) : null,
        session.referrals ? el('button', { class: 'button quiet', type: 'button', id: 'to-invite', text: T('webapp.invite'), onclick: () => go(referralScreen()) }) : null),
      searchForm(''),
      el('h2', { text: T('webapp.choose') }),
      el('div', { class: 'grid' }, session.lines.map((l) => l.app
        ? el('button', { class: 'card', type: 'button', 'data-line': l.id, text: l.label, onclick: () => openLine(l) })
        : el('a', { class: 'card', 'data-line': l.id, href: l.chat_url || '#', onclick: (e) => openChat(e, l) },
          l.label, el('small', { text: T('webapp.in_chat') })))),
      session.support ? el('nav', { class: 'links bottom' },
        el('button', { class: 'button quiet', type: 'button', id: 'to-support', text: T('webapp.support'), onclick: () => go(supportScreen('')) }),
        el('button', { class: 'button quiet', type: 'button', id: 'to-terms', text: T('webapp.terms'), onclick: () => go(termsScreen()) })) : null);
  }

  // An address outside the shop: Telegram opens it inside Telegram, the
  // browser in a new tab.
  function openLink(e, url) {
    if (inTelegram) { e.preventDefault(); tg.openLink(url); }
  }

  // The referral program: the buyer's link and Share. Inside Telegram,
  // Share sends the shop's invite card (a message the shop prepared,
  // shareMessage) where the client can, else Telegram's share link; in a
  // browser the link opens Telegram's share page.
  function referralScreen() {
    return async (me) => {
      $('#title').textContent = T('webapp.invite');
      const r = await api('GET', 'referral');
      if (!current(me)) return null;
      const copyB = el('button', { class: 'button quiet', type: 'button', text: T('webapp.copy') });
      copyB.addEventListener('click', () => copy(r.link, copyB));
      return el('div', { id: 'referral' },
        el('p', { text: r.how }),
        el('h2', { text: T('webapp.ref_link') }),
        el('div', { class: 'code' }, el('code', { id: 'ref-link', text: r.link }), copyB),
        el('p', { class: 'hint', id: 'ref-buyers', text: r.buyers }),
        el('p', { class: 'hint', id: 'ref-earned', text: r.earned }),
        el('a', { class: 'button wide', id: 'share', href: r.share_url, target: '_blank', rel: 'noopener', text: T('webapp.ref_share'), onclick: (e) => share(e, r) }));
    };
  }

  async function share(e, r) {
    if (!inTelegram) return; // the link opens Telegram's share page
    e.preventDefault();
    if (typeof tg.shareMessage === 'function' && (!tg.isVersionAtLeast || tg.isVersionAtLeast('8.0'))) {
      try {
        const p = await api('POST', 'referral/share');
        tg.shareMessage(p.id);
        return;
      } catch (_) { /* the share link instead */ }
    }
    tg.openTelegramLink(r.share_url);
  }

  // The shop's terms (the chat's /terms).
  function termsScreen() {
    return async (me) => {
      $('#title').textContent = T('webapp.terms');
      const r = await api('GET', 'terms');
      if (!current(me)) return null;
      return el('div', { id: 'terms' },
        el('p', { class: 'terms', text: r.text }),
        r.url ? el('a', { class: 'button quiet', href: r.url, target: '_blank', rel: 'noopener', id: 'terms-full', text: T('btn.terms_full'), onclick: (e) => openLink(e, r.url) }) : null,
        el('button', { class: 'button quiet', type: 'button', id: 'terms-support', text: T('webapp.support'), onclick: () => go(supportScreen('')) }));
    };
  }

  // Support: a message to the shop's staff (the chat's support: the same
  // request, limit and answers, which come to the chat with the bot), the
  // open request's messages, and closing it. A refused message stays typed.
  function supportScreen(prefill) {
    let draft = prefill || '';
    return async (me) => {
      $('#title').textContent = T('webapp.support');
      const page = await api('GET', 'support');
      if (!current(me)) return null;
      const root = el('div', { id: 'support' });
      const render = (p, said) => {
        const input = el('textarea', { id: 'support-text', name: 'text', rows: 4, maxLength: p.max, placeholder: T('webapp.support_placeholder'), 'aria-label': T('webapp.support_placeholder') });
        input.value = draft;
        input.addEventListener('input', () => { draft = input.value; });
        const err = el('div', { class: 'error', 'data-field': 'text', role: 'alert' });
        const send = el('button', { class: 'button', type: 'submit', id: 'support-send', text: T('webapp.support_send') });
        const form = el('form', { class: 'field', onsubmit: async (e) => {
          e.preventDefault();
          err.textContent = '';
          send.disabled = true;
          try {
            const r = await api('POST', 'support', { text: input.value });
            if (!current(me)) return;
            draft = '';
            render(r, r.sent);
          } catch (x) {
            if (x.info && x.info.field === 'text') err.textContent = x.message; else notice(x.message);
            send.disabled = false;
          }
        } }, input, err, send);
        const who = (m) => (m.staff ? T('webapp.support_staff') : T('webapp.support_you')) + ' · ' + m.date;
        root.replaceChildren(...[
          el('p', { class: 'hint', text: T('webapp.support_intro') }),
          said ? el('p', { class: 'status', id: 'support-status', text: said }) : null,
          p.open ? el('h2', { text: T('webapp.support_open') }) : null,
          p.thread.length ? el('div', { class: 'list', id: 'thread' }, p.thread.map((m) => el('div', { class: 'entry msg' + (m.staff ? ' staff' : ''), 'data-staff': String(!!m.staff) },
            el('small', { text: who(m) }), m.text, m.photo ? el('small', { text: T('webapp.support_photo') }) : null))) : null,
          form,
          el('nav', { class: 'links start' },
            p.open ? el('button', { class: 'button quiet', type: 'button', id: 'support-close', text: T('btn.close_ticket'), onclick: async () => {
              try { render(await api('POST', 'support/close'), T('support.closed')); } catch (x) { notice(x.message); }
            } }) : null,
            p.helpdesk ? el('a', { class: 'button quiet', href: p.helpdesk, target: '_blank', rel: 'noopener', text: T('btn.helpdesk'), onclick: (e) => openLink(e, p.helpdesk) }) : null),
        ].filter(Boolean));
      };
      render(page, '');
      return root;
    };
  }

  // The search across every line.
  function searchForm(value) {
    const input = el('input', { type: 'search', id: 'search-all', name: 'q', value, placeholder: T('webapp.search_all'), enterkeyhint: 'search', 'aria-label': T('webapp.search_all') });
    return el('form', { class: 'search', onsubmit: (e) => { e.preventDefault(); const q = input.value.trim(); if (q) go(searchScreen(q)); } },
      input, el('button', { class: 'button', type: 'submit', text: T('webapp.search_go') }));
  }

  function searchScreen(q) {
    return async (me) => {
      $('#title').textContent = T('webapp.search_all');
      const list = el('div', { class: 'list', id: 'results' });
      const more = el('button', { class: 'button quiet', type: 'button', text: T('webapp.more'), hidden: true });
      let from = 0;
      const load = async () => {
        const r = await api('GET', 'search?q=' + encodeURIComponent(q) + '&from=' + from);
        if (!current(me)) return;
        for (const f of r.results) {
          const line = session.lines.find((l) => l.id === f.line);
          list.append(el('button', { class: 'card pic', type: 'button', 'data-found': f.line + ':' + f.category, onclick: () => go(categoryScreen(line, f.category)) },
            thumb(f.image, f.name),
            el('div', { class: 'body' },
              el('div', { class: 'row' }, el('span', { text: f.name }), el('span', { class: 'price', text: T('webapp.from', { price: priceText(f.from) }) })),
              el('small', { text: f.line_label }))));
        }
        if (!from && !r.results.length) list.append(el('p', { class: 'hint', text: T('webapp.nothing_found') }));
        from = r.next;
        more.hidden = r.next < 0;
      };
      more.addEventListener('click', async () => { try { await load(); } catch (err) { notice(err.message); } });
      await load();
      return el('div', {}, searchForm(q), list, more);
    };
  }

  // A line with one category (Stars, Premium, top-ups) opens it at once.
  function openLine(l) { go(l.category ? categoryScreen(l, l.category) : lineScreen(l)); }

  function openChat(e, l) {
    if (!l.chat_url) { e.preventDefault(); return; }
    if (inTelegram) { e.preventDefault(); tg.openTelegramLink(l.chat_url); }
  }

  // A line's categories, with the search and (game keys) the filters.
  function lineScreen(line, start) {
    const f = Object.assign({ q: '', region: '', platform: '' }, start);
    return async (me) => {
      $('#title').textContent = line.label;
      const qs = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
      const data = await api('GET', 'lines/' + line.id + (qs.toString() ? '?' + qs : ''));
      if (!current(me)) return null;
      const input = el('input', { type: 'search', name: 'q', value: f.q, placeholder: T('webapp.search'), enterkeyhint: 'search', 'aria-label': T('webapp.search') });
      const search = el('form', { class: 'search', onsubmit: (e) => { e.preventDefault(); f.q = input.value.trim(); draw(); } },
        input, el('button', { class: 'button', type: 'submit', text: T('webapp.search_go') }));
      const parts = [search];
      if (data.filters && data.filters.regions) {
        const pick = (key, all, values) => el('select', { name: key, 'aria-label': all, onchange: (e) => { f[key] = e.target.value; draw(); } },
          el('option', { value: '', text: all }), values.map((v) => el('option', { value: v, text: v, selected: v === f[key] })));
        parts.push(el('div', { class: 'filters' },
          pick('region', T('webapp.all_regions'), data.filters.regions || []),
          pick('platform', T('webapp.all_platforms'), data.filters.platforms || [])));
      }
      if (data.stale) parts.push(el('p', { class: 'hint', text: T('catalog.stale') }));
      if (!data.categories.length) parts.push(el('p', { class: 'hint', text: f.q ? T('webapp.nothing_found') : T('catalog.empty') }));
      const card = (c) => {
        const sub = [c.group && c.group !== c.name ? c.group : '', c.region, c.platform, c.variant].filter(Boolean).join(' · ');
        return el('button', { class: 'card pic', type: 'button', 'data-category': c.id, onclick: () => go(categoryScreen(line, c.id)) },
          thumb(c.image, c.name), el('span', { class: 'body' }, c.name, sub ? el('small', { text: sub }) : null));
      };
      const list = el('div', { class: 'list' }, data.categories.map(card));
      parts.push(list);
      if (data.more) {
        let page = data.page;
        const more = el('button', { class: 'button quiet', type: 'button', id: 'more-categories', text: T('webapp.more') });
        more.addEventListener('click', async () => {
          try {
            qs.set('page', String(++page));
            const next = await api('GET', 'lines/' + line.id + '?' + qs);
            list.append(...next.categories.map(card));
            more.hidden = !next.more;
          } catch (err) { notice(err.message); }
        });
        parts.push(more);
      }
      return el('div', {}, parts);
    };
  }

  // A category: its items, the quantity or the fields, then the quote.
  function categoryScreen(line, id) {
    const form = { item: '', quantity: 1, answers: {}, errors: {} };
    return async (me) => {
      const data = await api('GET', 'lines/' + line.id + '/categories/' + encodeURIComponent(id));
      if (!current(me)) return null;
      $('#title').textContent = data.category.name;
      const root = el('div', {});
      const render = () => {
        const chosen = data.items.find((i) => i.id === form.item);
        const parts = [];
        parts.push(el('div', { class: 'hero' }, thumb(data.category.image, data.category.name, true),
          el('div', {}, el('strong', { text: data.category.name }),
            [data.category.region, data.category.platform].filter(Boolean).length ? el('small', { class: 'hint', text: [data.category.region, data.category.platform].filter(Boolean).join(' · ') }) : null)));
        if (data.category.note) parts.push(el('p', { class: 'hint', text: data.category.note }));
        if (data.stale) parts.push(el('p', { class: 'hint', text: T('catalog.stale') }));
        parts.push(el('h2', { text: T('webapp.choose_item') }));
        if (!data.items.length) parts.push(el('p', { class: 'hint', text: T('catalog.empty') }));
        parts.push(el('div', { class: 'list', id: 'items' }, data.items.map((it) => {
          const off = it.sold_out || it.paused;
          return el('button', {
            class: 'card', type: 'button', 'data-item': it.id, disabled: off, 'aria-pressed': String(it.id === form.item),
            onclick: () => { form.item = it.id; form.quantity = Math.max(form.quantity, it.min || 1); render(); },
          },
          el('div', { class: 'row' }, el('span', { text: it.name }),
            off ? el('span', { class: 'mark', text: it.sold_out ? T('webapp.sold_out') : T('webapp.paused') }) : el('span', { class: 'price', text: priceText(it.price) })),
          it.delivery ? el('small', { text: it.delivery }) : null,
          it.note ? el('small', { text: it.note }) : null);
        })));
        if (data.more) {
          parts.push(el('button', { class: 'button quiet', type: 'button', id: 'more-items', text: T('webapp.more'), onclick: async () => {
            try {
              const next = await api('GET', 'lines/' + line.id + '/categories/' + encodeURIComponent(id) + '?page=' + (data.page + 1));
              data.items = data.items.concat(next.items);
              data.page = next.page;
              data.more = next.more;
              render();
            } catch (err) { notice(err.message); }
          } }));
        }
        if (chosen) {
          if (data.by_unit) {
            parts.push(field('quantity', T('webapp.quantity'), el('input', {
              id: 'quantity', name: 'quantity', type: 'number', inputmode: 'numeric', min: chosen.min, max: chosen.max, value: form.quantity,
              oninput: (e) => { form.quantity = parseInt(e.target.value, 10) || 0; },
            }), T('webapp.quantity_range', { min: chosen.min, max: chosen.max })));
          }
          if (data.fields.length) {
            parts.push(el('h2', { text: T('webapp.details') }), el('p', { class: 'hint', text: T('webapp.check_details') }));
            for (const f of data.fields) parts.push(answerField(f));
          }
          setMain(T('webapp.get_price'), getQuote);
        }
        root.replaceChildren(...parts);
      };
      const field = (key, label, input, hint) => el('div', { class: 'field' },
        el('label', { text: label }), input,
        hint ? el('div', { class: 'hint', text: hint }) : null,
        el('div', { class: 'error', 'data-field': key, role: 'alert', text: form.errors[key] || '' }));
      const showError = (key, msg) => {
        form.errors[key] = msg || '';
        const box = root.querySelector('.error[data-field="' + CSS.escape(key) + '"]');
        if (box) box.textContent = msg || '';
        const input = root.querySelector('[name="' + CSS.escape(key === 'quantity' ? 'quantity' : 'f:' + key) + '"]');
        if (input) input.setAttribute('aria-invalid', msg ? 'true' : 'false');
      };
      const answerField = (f) => {
        const value = form.answers[f.key] || '';
        const input = f.kind === 'select'
          ? el('select', { name: 'f:' + f.key }, el('option', { value: '', text: '—' }), f.options.map((o) => el('option', { value: o, text: o, selected: o === value })))
          : el('input', {
            name: 'f:' + f.key, value, autocomplete: 'off', spellcheck: false,
            type: f.secret ? 'password' : f.kind === 'email' ? 'email' : f.kind === 'url' || f.kind === 'shop.invite' ? 'url' : f.kind === 'phone' ? 'tel' : 'text',
            inputmode: f.kind === 'number' ? 'numeric' : f.kind === 'shop.amount' ? 'decimal' : undefined,
          });
        input.addEventListener('input', () => { form.answers[f.key] = input.value; });
        input.addEventListener('change', () => checkAnswer(f, input));
        return field(f.key, f.label, input);
      };
      // The server checks each answer with the chat's own check; a
      // refused one keeps what was typed, with the reason beside it.
      const checkAnswer = async (f, input) => {
        form.answers[f.key] = input.value;
        try {
          const r = await api('POST', 'check', { line: line.id, category: id, field: f.key, value: input.value });
          if (input.value !== form.answers[f.key]) return; // typed on since
          if (r.ok) {
            showError(f.key, '');
            if (!f.secret && r.value !== input.value) { input.value = r.value; form.answers[f.key] = r.value; }
          } else {
            showError(f.key, r.reason);
          }
        } catch (err) { notice(err.message); }
      };
      const getQuote = async () => {
        busyMain(true);
        notice('');
        try {
          const r = await api('POST', 'quote', { line: line.id, category: id, item: form.item, quantity: form.quantity, fields: form.answers });
          for (const k of Object.keys(form.errors)) showError(k, '');
          go(quoteScreen(r.quote));
        } catch (err) {
          if (err.info && err.info.code === 'bad_field' && err.info.field) showError(err.info.field, err.message);
          else notice(err.message);
        } finally {
          busyMain(false);
        }
      };
      render();
      return root;
    };
  }

  // The quote: what, for whom, how many, the total, then Pay (in Stars,
  // or from the wallet).
  function quoteScreen(q) {
    return async (me) => {
      $('#title').textContent = T('webapp.summary');
      const row = (label, value) => value ? el('div', { class: 'row' }, el('span', { class: 'hint', text: label }), el('span', { text: value })) : null;
      let wallet = null;
      if (session.pay.wallet) {
        try { wallet = await api('GET', 'wallet'); } catch (_) { wallet = null; }
        if (!current(me)) return null;
      }
      if (session.pay.stars) setMain(T('webapp.pay', { price: q.total.stars_text }), () => pay(q));
      return el('div', {},
        el('div', { class: 'summary', id: 'quote', 'data-quote': q.id },
          row(T('webapp.item'), q.item),
          row(T('webapp.for'), q.for),
          q.quantity > 1 ? row(T('webapp.qty'), String(q.quantity)) : null,
          q.unit ? row(T('webapp.unit'), priceText(q.unit)) : null,
          q.promo ? row(T('webapp.promo_applied', { code: q.promo }), priceText(q.list)) : null,
          el('div', { class: 'row' }, el('strong', { text: T('webapp.total') }), el('span', { class: 'price', id: 'total', text: priceText(q.total) }))),
        session.pay.promo ? promoField(q) : null,
        q.stale ? el('p', { class: 'hint', text: T('catalog.stale') }) : null,
        el('p', { class: 'hint', text: q.valid }),
        wallet ? el('button', { class: 'button', type: 'button', id: 'pay-wallet', text: T('webapp.pay_wallet', { balance: wallet.balance_text }), onclick: (e) => payWallet(q, e.target) }) : null);
    };
  }

  // A promo code for the quote: a new quote at the discounted price, or
  // the reason beside what was typed.
  function promoField(q) {
    const input = el('input', { id: 'promo', name: 'promo', autocomplete: 'off', autocapitalize: 'characters', placeholder: T('webapp.promo') });
    const err = el('div', { class: 'error', 'data-field': 'promo', role: 'alert' });
    return el('div', { class: 'field' },
      el('form', { class: 'search', onsubmit: async (e) => {
        e.preventDefault();
        err.textContent = '';
        try {
          const r = await api('POST', 'quotes/' + encodeURIComponent(q.id) + '/promo', { code: input.value });
          replace(quoteScreen(r.quote));
        } catch (x) {
          if (x.info && x.info.field === 'promo') err.textContent = x.message; else notice(x.message);
        }
      } }, input, el('button', { class: 'button quiet', type: 'submit', id: 'promo-go', text: T('webapp.promo_apply') })), err);
  }

  // Pay from the wallet: the server debits it and makes the order at once.
  async function payWallet(q, button) {
    button.disabled = true;
    notice('');
    try {
      const r = await api('POST', 'pay', { quote: q.id, method: 'wallet' });
      replace(orderScreen(r.order));
    } catch (err) {
      notice(err.message);
      button.disabled = false;
    }
  }

  async function pay(q) {
    busyMain(true);
    try {
      const r = await api('POST', 'pay', { quote: q.id });
      if (r.order) { replace(orderScreen(r.order)); return; }
      if (inTelegram && tg.openInvoice) {
        // What openInvoice reports is not proof: the order comes from the
        // payment's update, which the waiting screen polls for.
        tg.openInvoice(r.link, (status) => {
          if (status === 'cancelled') notice(T('webapp.pay_cancelled'));
          else if (status === 'failed') notice(T('webapp.pay_failed'));
          else go(waitScreen(q.id, false));
        });
      } else {
        go(waitScreen(q.id, true));
      }
    } catch (err) {
      notice(err.message);
    } finally {
      busyMain(false);
    }
  }

  // Waiting for the payment's update to make the order.
  function waitScreen(quoteID, outside) {
    return async (me) => {
      const poll = async () => {
        if (!current(me)) return;
        try {
          const r = await api('GET', 'quotes/' + encodeURIComponent(quoteID) + '/order');
          if (!current(me)) return;
          if (r.order) { replace(orderScreen(r.order)); return; }
        } catch (err) {
          if (!current(me) || err.status === 401) return;
        }
        setTimeout(poll, POLL_MS);
      };
      setTimeout(poll, POLL_MS);
      return el('p', { class: 'status', id: 'status', 'data-status': 'awaiting_payment' }, el('span', { class: 'spinner' }),
        outside ? T('webapp.pay_outside') : T('webapp.paying'));
    };
  }

  // An order as it goes: being processed, then the codes (or the refund).
  function orderScreen(order) {
    return async (me) => {
      $('#title').textContent = T('webapp.order', { order: order.number });
      if (!order.done) {
        setTimeout(async function poll() {
          if (!current(me)) return;
          try {
            const r = await api('GET', 'orders/' + encodeURIComponent(order.ref));
            if (!current(me)) return;
            if (r.order.status !== order.status || r.order.done) { replace(orderScreen(r.order)); return; }
          } catch (err) {
            if (!current(me) || err.status === 401) return;
          }
          setTimeout(poll, POLL_MS);
        }, POLL_MS);
      }
      const parts = [
        el('p', { class: 'hint', text: order.item }),
        el('p', { class: 'status', id: 'status', 'data-status': order.status }, order.done ? null : el('span', { class: 'spinner' }), order.status_text),
      ];
      if (order.refund) parts.push(el('p', { class: 'refund', id: 'refund', text: order.refund }));
      if (order.codes && order.codes.length) {
        parts.push(el('h2', { text: T('webapp.codes') }), el('div', { class: 'codes' }, order.codes.map((c) => {
          const b = el('button', { class: 'button quiet', type: 'button', text: T('webapp.copy') });
          b.addEventListener('click', () => copy(c, b));
          return el('div', { class: 'code' }, el('code', { text: c }), b);
        })), el('p', { class: 'hint', text: T('webapp.delivered_note') }));
      } else if (order.status === 'delivered') {
        parts.push(el('p', { text: T('webapp.done_no_codes') }));
      } else if (order.status === 'refunded' || order.status === 'refunding') {
        parts.push(el('p', { text: T('webapp.refunded') }));
      } else if (order.status === 'needs_review') {
        parts.push(el('p', { text: T('webapp.review') }));
      } else {
        parts.push(el('p', { text: T('webapp.processing') }));
      }
      if (session.support) {
        parts.push(el('button', { class: 'button quiet', type: 'button', id: 'order-help', text: T('webapp.order_help'),
          onclick: () => go(supportScreen(T('webapp.order_help_text', { order: order.number }) + ' ')) }));
      }
      if (order.done) setMain(T('webapp.again'), home);
      return el('div', { id: 'order', 'data-ref': order.ref }, parts);
    };
  }

  // One of the buyer's orders by its ref, as it is now.
  function orderRefScreen(ref) {
    return async (me) => {
      const r = await api('GET', 'orders/' + encodeURIComponent(ref));
      if (!current(me)) return null;
      return orderScreen(r.order)(me);
    };
  }

  // My orders: newest first, a page at a time.
  function ordersScreen() {
    let page = 0;
    return async (me) => {
      $('#title').textContent = T('webapp.my_orders');
      const list = el('div', { class: 'list', id: 'orders' });
      const more = el('button', { class: 'button quiet', type: 'button', text: T('webapp.more'), hidden: true });
      const load = async () => {
        const r = await api('GET', 'orders?page=' + page);
        if (!current(me)) return;
        for (const o of r.orders) {
          list.append(el('button', { class: 'card', type: 'button', 'data-order': o.ref, onclick: () => go(orderRefScreen(o.ref)) },
            el('div', { class: 'row' }, el('span', { text: T('webapp.order', { order: o.number }) }), el('span', { class: 'price', text: priceText(o.total) })),
            el('small', { text: [o.item, o.status_text, o.paid].filter(Boolean).join(' · ') })));
        }
        more.hidden = !r.more;
        if (!page && !r.orders.length) list.append(el('p', { class: 'hint', text: T('webapp.no_orders') }));
      };
      more.addEventListener('click', async () => { page++; try { await load(); } catch (err) { notice(err.message); } });
      await load();
      return el('div', {}, list, more);
    };
  }

  // The wallet: the balance, a top-up paid in Stars, the history.
  function walletScreen() {
    return async (me) => {
      $('#title').textContent = T('webapp.wallet');
      const w = await api('GET', 'wallet');
      if (!current(me)) return null;
      const parts = [el('p', { class: 'balance' }, el('span', { class: 'hint', text: T('webapp.balance') + ' ' }), el('strong', { id: 'balance', text: w.balance_text }))];
      if (w.topup && w.topup.full) parts.push(el('p', { class: 'hint', text: T('webapp.topup_full') }));
      else if (w.topup) {
        const input = el('input', { id: 'topup-usd', name: 'usd', inputmode: 'decimal', autocomplete: 'off', placeholder: w.topup.min.usd });
        const err = el('div', { class: 'error', 'data-field': 'usd', role: 'alert' });
        const topup = async (usd) => {
          err.textContent = '';
          try {
            const r = await api('POST', 'wallet/topup', { usd });
            if (inTelegram && tg.openInvoice) {
              tg.openInvoice(r.link, (status) => { if (status === 'paid' || status === 'pending') go(topupWaitScreen(w.balance)); });
            } else {
              go(topupWaitScreen(w.balance));
            }
          } catch (e) {
            if (e.info && e.info.field === 'usd') err.textContent = e.message; else notice(e.message);
          }
        };
        parts.push(el('h2', { text: T('webapp.topup') }),
          el('div', { class: 'grid' }, w.topup.amounts.map((a) => el('button', { class: 'card', type: 'button', 'data-usd': a.usd, onclick: () => topup(a.usd) }, a.text, el('small', { text: a.stars_text })))),
          el('div', { class: 'field' }, el('label', { text: T('webapp.topup_other') }),
            el('form', { class: 'search', onsubmit: (e) => { e.preventDefault(); topup(input.value); } },
              input, el('button', { class: 'button', type: 'submit', id: 'topup-go', text: T('webapp.topup') })),
            el('div', { class: 'hint', text: T('webapp.topup_range', { min: w.topup.min.text, max: w.topup.max.text }) }), err));
      }
      parts.push(el('h2', { text: T('webapp.history') }));
      if (!w.entries.length) parts.push(el('p', { class: 'hint', text: T('webapp.no_entries') }));
      parts.push(el('div', { class: 'list', id: 'entries' }, w.entries.map((e) => el('div', { class: 'entry row' },
        el('span', {}, e.what, el('small', { text: e.date })), el('span', { class: 'price', text: e.amount })))));
      return el('div', {}, parts);
    };
  }

  // Waiting for a top-up's payment: the wallet page again once the
  // balance moved (only the payment's update credits it).
  function topupWaitScreen(was) {
    return async (me) => {
      const poll = async () => {
        if (!current(me)) return;
        try {
          const w = await api('GET', 'wallet');
          if (!current(me)) return;
          if (w.balance !== was) { stack.pop(); replace(walletScreen()); return; }
        } catch (err) {
          if (!current(me) || err.status === 401) return;
        }
        setTimeout(poll, POLL_MS);
      };
      setTimeout(poll, POLL_MS);
      return el('p', { class: 'status', id: 'status', 'data-status': 'awaiting_payment' }, el('span', { class: 'spinner' }), T('webapp.topup_waiting'));
    };
  }

  async function copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (_) {
      const r = document.createRange();
      r.selectNodeContents(button.previousSibling);
      const s = getSelection();
      s.removeAllRanges();
      s.addRange(r);
      document.execCommand('copy');
    }
    button.textContent = T('webapp.copied');
  }

  // A link into the app (startapp, or the chat's deep links): a line, or
  // one category of it (gc-, key-, tu-, svc-).
  function deepLink(param) {
    const prefixes = { gc: 'giftcards', key: 'keys', tu: 'games', svc: 'services', game: 'gifts' };
    const [prefix, ...rest] = (param || '').split('-');
    const byName = session.lines.find((l) => l.app && l.id === param);
    if (byName) { openLine(byName); return; }
    const line = session.lines.find((l) => l.app && l.id === prefixes[prefix]);
    if (line && rest.length) { stack.push(lineScreen(line)); go(categoryScreen(line, rest.join('-'))); return; }
    const pages = { support: session.support && (() => supportScreen('')), terms: session.support && termsScreen, invite: session.referrals && referralScreen };
    if (pages[param]) { go(pages[param]()); return; }
    draw(); // a link to nothing the app knows: its first screen
  }

  async function start() {
    applyTheme();
    if (tg) { tg.ready(); tg.expand(); tg.BackButton.onClick(back); }
    $('#back').addEventListener('click', back);
    $('#main').addEventListener('click', () => { if (mainHandler) mainHandler(); });
    if (!initData) { fatal('This page opens from the shop\'s bot in Telegram.'); return; }
    try {
      session = await api('GET', 'session');
    } catch (err) {
      if (err.status !== 401) fatal(err.message);
      return;
    }
    texts = session.texts;
    lang = session.lang;
    document.documentElement.lang = lang;
    document.title = T('webapp.title');
    const sel = $('#lang');
    sel.setAttribute('aria-label', T('webapp.language'));
    sel.replaceChildren(...session.langs.map((l) => el('option', { value: l.code, text: l.name, selected: l.code === lang })));
    sel.hidden = session.langs.length < 2;
    sel.onchange = async () => {
      lang = sel.value;
      stored.set(lang);
      session = await api('GET', 'session');
      texts = session.texts;
      document.documentElement.lang = lang;
      draw();
    };
    stack.push(homeScreen);
    if (session.start) deepLink(session.start);
    else draw();
  }

  start();
})();
