// Starts an asciinema player for every pane recording on a studyloop report
// page. The cast is in the page as text (a file:// page cannot fetch a file),
// inside <pre class="cast-data" data-player="ID">; the player renders it as a
// terminal, never as HTML.
(function () {
  "use strict";
  if (!window.AsciinemaPlayer) {
    return;
  }
  var casts = document.querySelectorAll("pre.cast-data");
  for (var i = 0; i < casts.length; i++) {
    var pre = casts[i];
    var box = document.getElementById(pre.getAttribute("data-player"));
    if (box) {
      window.AsciinemaPlayer.create({ data: pre.textContent }, box, {
        fit: "width",
        preload: true,
        idleTimeLimit: 2,
        controls: true,
      });
    }
  }
})();
