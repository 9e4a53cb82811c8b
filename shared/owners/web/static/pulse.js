// Team Pulse live refresh: every 2.5 s, fetch the pulse fragment named by
// data-refresh (same origin, the session cookie) and swap it in place. No
// framework, no inline script (the CSP is default-src 'self'); without
// JavaScript the page still works and a reload shows the latest pulse.
(function () {
  'use strict';
  var box = document.querySelector('[data-refresh]');
  if (!box || !window.fetch) return;
  var src = new URL(box.getAttribute('data-refresh'), window.location.href);
  var busy = false;
  function tick() {
    if (busy || document.hidden) return;
    busy = true;
    fetch(src, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } })
      .then(function (r) {
        if (r.status === 401) { window.location.reload(); return null; }
        return r.ok ? r.text() : null;
      })
      .then(function (html) {
        if (html === null) return;
        var doc = new DOMParser().parseFromString('<div>' + html + '</div>', 'text/html');
        var fresh = doc.body.firstElementChild;
        if (fresh) box.replaceChildren.apply(box, Array.prototype.slice.call(fresh.childNodes));
        box.setAttribute('data-refreshed', new Date().toISOString());
      })
      .catch(function () { /* offline for a moment: try again next tick */ })
      .then(function () { busy = false; });
  }
  window.setInterval(tick, 2500);
  document.addEventListener('visibilitychange', tick);
}());
