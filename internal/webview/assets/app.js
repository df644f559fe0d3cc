// reel's run pages: folding, filters, live updates over Server-Sent Events,
// and playback of a recorded run. No framework, no network beyond the
// page's own server.
(function () {
  "use strict";
  var body = document.body;
  var events = document.getElementById("events");

  function each(sel, fn) { Array.prototype.forEach.call(document.querySelectorAll(sel), fn); }

  // Toolbar: expand/collapse every fold, hide kinds of content.
  each("[data-act]", function (b) {
    b.addEventListener("click", function () {
      var open = b.getAttribute("data-act") === "expand";
      each("details.fold", function (d) { d.open = open; });
    });
  });
  each("[data-toggle]", function (c) {
    c.addEventListener("change", function () {
      body.classList.toggle("hidden-" + c.getAttribute("data-toggle"), !c.checked);
    });
  });

  // A link to an event inside a folded sub-workflow opens it.
  function reveal() {
    if (!location.hash) return;
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    // an event is centred; a section (the conversation) starts the view
    if (el) el.scrollIntoView({ block: el.classList.contains("ev") ? "center" : "start" });
  }
  window.addEventListener("hashchange", reveal);
  reveal();

  // Live: new events arrive rendered, one per message; step and run events
  // also refresh the tree and the timeline.
  var live = body.getAttribute("data-live");
  if (live && events && window.EventSource) {
    var badge = document.getElementById("live");
    var overview = document.getElementById("overview");
    // The tree and the timeline are the whole run read again by the
    // server and laid out again here: tens of milliseconds of both on a
    // small run, more on a large one, which would delay the events behind
    // it. So they refresh at most once a second, and five times as rarely
    // as one refresh takes; a refresh is skipped when nothing changed.
    var pending = null, busy = false, again = false, last = 0, cost = 0, shown = null, ended = false;
    var refresh = function () {
      pending = null; busy = true;
      var t0 = Date.now();
      fetch(body.getAttribute("data-overview"), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html !== null && overview && html !== shown) { overview.innerHTML = html; shown = html; }
        })
        .finally(function () {
          last = Date.now(); cost = last - t0; busy = false;
          if (again) { again = false; schedule(); }
        });
    };
    var schedule = function () {
      if (busy) { again = true; return; }
      if (pending) return;
      pending = setTimeout(refresh, ended ? 0 : Math.max(150, last + Math.max(1000, 5 * cost) - Date.now()));
    };
    var url = live + (live.indexOf("?") < 0 ? "?" : "&") + "from=" + body.getAttribute("data-from");
    var es = new EventSource(url);
    es.addEventListener("message", function (m) {
      var tpl = document.createElement("template");
      tpl.innerHTML = m.data;
      var node = tpl.content.firstElementChild;
      if (!node) return;
      var old = node.id && document.getElementById(node.id);
      var call = node.getAttribute("data-call");
      var card = !old && call && /\btool-result\b/.test(node.className) &&
        events.querySelector('.ev.tool-call[data-call="' + CSS.escape(call) + '"]');
      // one card per tool invocation: the result goes inside its call's
      if (card) {
        card.appendChild(node);
        if (/\bbad\b/.test(node.className)) card.classList.add("bad");
      } else if (old) old.replaceWith(node); else events.appendChild(node);
      if (/^(step|run)-/.test(node.className.replace(/^ev /, ""))) schedule();
    });
    es.addEventListener("end", function () {
      es.close();
      if (badge) { badge.textContent = "finished"; badge.classList.add("done"); }
      // the finished run's tree at once, after any refresh under way
      ended = true; clearTimeout(pending); pending = null;
      schedule();
    });
  }

  // Playback (the self-contained replay file): reveal the run as it
  // happened, gaps capped at 2 s before the speed-up.
  var play = document.getElementById("play");
  if (play) {
    var speedSel = document.getElementById("speed");
    var scrub = document.getElementById("scrub");
    var clock = document.getElementById("clock");
    var timed = Array.prototype.slice.call(document.querySelectorAll("[data-t]"));
    var times = timed.map(function (el) { return +el.getAttribute("data-t"); });
    var end = Math.max.apply(null, times.concat([0]));
    scrub.max = end;
    var order = times.slice().sort(function (a, b) { return a - b; });
    // Compressed time: each gap between consecutive events counts at
    // most 2000 ms, so a run that waited an hour does not.
    var cmap = {}, acc = 0, prev = order.length ? order[0] : 0;
    order.forEach(function (t) { acc += Math.min(t - prev, 2000); cmap[t] = acc; prev = t; });
    var cend = acc, pos = cend, running = false, last = 0;
    function show(c) {
      pos = c;
      timed.forEach(function (el, i) { el.classList.toggle("pending", cmap[times[i]] > c); });
      scrub.value = Math.round(c * end / (cend || 1));
      clock.textContent = (c / 1000).toFixed(1) + " s / " + (cend / 1000).toFixed(1) + " s";
    }
    function tick(now) {
      if (!running) return;
      var speed = +speedSel.value;
      if (speed === 0) { show(cend); stop(); return; }
      pos += (now - last) * speed; last = now;
      if (pos >= cend) { show(cend); stop(); return; }
      show(pos);
      var shown = document.querySelectorAll(".ev:not(.pending)");
      if (shown.length) shown[shown.length - 1].scrollIntoView({ block: "end" });
      requestAnimationFrame(tick);
    }
    function stop() { running = false; play.textContent = "▶ play"; }
    play.addEventListener("click", function () {
      if (running) { stop(); return; }
      if (pos >= cend) show(0);
      running = true; play.textContent = "❚❚ pause"; last = performance.now();
      requestAnimationFrame(tick);
    });
    scrub.addEventListener("input", function () { stop(); show(+scrub.value * (cend || 1) / (end || 1)); });
    show(cend);
  }
})();
