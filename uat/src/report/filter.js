// The report index's filters (status, harness, surface) and text search over
// the trials table. Progressive enhancement: the table is complete without
// this file; it only adds controls and hides rows that do not match. State is
// kept in the URL hash (#status=failed&q=paste) so a filtered view can be
// shared; the section links (#trials) are left alone.
(function () {
  "use strict";
  var table = document.getElementById("trials-table");
  var box = document.getElementById("filters");
  if (!table || !box || !table.tBodies.length) { return; }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var keys = ["status", "harness", "surface"];
  var labels = { status: "Status", harness: "Harness", surface: "Surface" };
  var controls = {};

  function values(key) {
    var seen = [];
    rows.forEach(function (r) {
      var v = r.getAttribute("data-" + key);
      if (v !== null && seen.indexOf(v) < 0) { seen.push(v); }
    });
    return seen.sort();
  }

  function label(text, control) {
    var l = document.createElement("label");
    l.appendChild(document.createTextNode(text));
    l.appendChild(control);
    box.appendChild(l);
  }

  keys.forEach(function (key) {
    var select = document.createElement("select");
    select.id = "filter-" + key;
    var all = document.createElement("option");
    all.value = "";
    all.textContent = "all";
    select.appendChild(all);
    values(key).forEach(function (v) {
      var o = document.createElement("option");
      o.value = v;
      o.textContent = v;
      select.appendChild(o);
    });
    controls[key] = select;
    label(labels[key], select);
  });
  var search = document.createElement("input");
  search.type = "search";
  search.id = "filter-text";
  search.placeholder = "trial, reason…";
  label("Search", search);
  var count = document.createElement("output");
  count.id = "filter-count";
  count.setAttribute("aria-live", "polite");
  box.appendChild(count);

  function apply() {
    var q = search.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (r) {
      var ok = keys.every(function (k) {
        var want = controls[k].value;
        return !want || r.getAttribute("data-" + k) === want;
      });
      if (ok && q) { ok = r.textContent.toLowerCase().indexOf(q) >= 0; }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " trials shown";
  }

  function save() {
    var parts = [];
    keys.forEach(function (k) {
      if (controls[k].value) { parts.push(k + "=" + encodeURIComponent(controls[k].value)); }
    });
    if (search.value) { parts.push("q=" + encodeURIComponent(search.value)); }
    if (parts.length || location.hash.indexOf("=") >= 0) {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
    }
  }

  function load() {
    if (location.hash.indexOf("=") < 0) { return; }
    location.hash.slice(1).split("&").forEach(function (p) {
      var kv = p.split("=");
      var v = decodeURIComponent(kv[1] || "");
      if (kv[0] === "q") { search.value = v; } else if (controls[kv[0]]) { controls[kv[0]].value = v; }
    });
  }

  keys.forEach(function (k) {
    controls[k].addEventListener("change", function () { apply(); save(); });
  });
  search.addEventListener("input", function () { apply(); save(); });
  load();
  apply();
}());
