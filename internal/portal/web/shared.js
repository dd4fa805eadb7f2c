/*
 * What the portal's pages (app.js, fleet.js) share: building elements, and the framing of
 * Server-Sent Events, which they read with fetch() (EventSource cannot send Authorization).
 * Nothing external (CSP: 'self').
 */
(function () {
  'use strict';

  // el builds an element; attributes with null/undefined/false values are skipped.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  // readEvents implements text/event-stream framing: "field: value" lines, ':' comments,
  // a blank line ends an event; lines end in \n, \r\n or \r and may be split across chunks.
  async function readEvents(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let ev = { type: 'message', data: [], id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let m;
      while ((m = /\r\n|\r|\n/.exec(buffer)) && !(m[0] === '\r' && m.index === buffer.length - 1)) {
        const text = buffer.slice(0, m.index);
        buffer = buffer.slice(m.index + m[0].length);
        if (text === '') {
          if (ev.data.length || ev.id !== null) onEvent(ev);
          ev = { type: 'message', data: [], id: null };
        } else if (text[0] !== ':') {
          parseField(ev, text);
        }
      }
    }
  }

  function parseField(ev, text) {
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'event') ev.type = value || 'message';
    else if (field === 'data') ev.data.push(value);
    else if (field === 'id' && !value.includes('\u0000')) ev.id = value;
  }

  window.Portal = { el, readEvents };
}());
