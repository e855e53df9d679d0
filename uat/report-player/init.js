// Starts an asciinema player for every pane recording on a studyloop report
// page. The cast is in the page (a file:// page cannot fetch a file), inside
// <pre class="cast-data" data-player="ID" data-encoding="gzip+base64">: the
// cast gzipped then base64'd, because a 30-minute session is ~90 MB of
// redraws and a few MiB gzipped. The browser's own DecompressionStream
// un-gzips it; the player renders it as a terminal, never as HTML.
(function () {
  "use strict";
  if (!window.AsciinemaPlayer) {
    return;
  }
  function text(pre) {
    if (pre.getAttribute("data-encoding") !== "gzip+base64") {
      return Promise.resolve(pre.textContent);
    }
    var raw = atob(pre.textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) {
      bytes[i] = raw.charCodeAt(i);
    }
    var plain = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(plain).text();
  }
  function start(pre) {
    var box = document.getElementById(pre.getAttribute("data-player"));
    if (!box) {
      return;
    }
    text(pre).then(
      function (data) {
        window.AsciinemaPlayer.create({ data: data }, box, {
          fit: "width",
          preload: true,
          idleTimeLimit: 2,
          controls: true,
        });
      },
      function (err) {
        box.textContent = "This recording could not be unpacked in the browser (" + err + "); download it instead.";
      }
    );
  }
  var casts = document.querySelectorAll("pre.cast-data");
  for (var i = 0; i < casts.length; i++) {
    start(casts[i]);
  }
})();
