// seedfall triage report: copy buttons for the replay commands.
// The page's Content-Security-Policy allows this script only (by its hash), so nothing
// a guest wrote into a trace or a failure reason can run here.
(function () {
  "use strict";

  function say(button, text) {
    button.textContent = text;
    window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }

  // fallback selects the command so that the user can copy it by hand, and tries the
  // old execCommand path, which works on file:// pages in browsers without a clipboard API.
  function fallback(button, code) {
    var ok = false;
    try {
      var range = document.createRange();
      range.selectNodeContents(code);
      var sel = window.getSelection();
      if (sel) {
        sel.removeAllRanges();
        sel.addRange(range);
      }
      if (typeof document.execCommand === "function") {
        ok = document.execCommand("copy");
      }
    } catch (e) {
      ok = false;
    }
    say(button, ok ? "Copied" : "Selected: press Ctrl+C");
  }

  function copy(button) {
    var code = document.getElementById(button.getAttribute("data-target"));
    if (!code) {
      return;
    }
    var text = code.textContent;
    var clip = null;
    try {
      clip = navigator.clipboard;
    } catch (e) {
      clip = null;
    }
    if (clip && typeof clip.writeText === "function") {
      var p;
      try {
        p = clip.writeText(text);
      } catch (e) {
        fallback(button, code);
        return;
      }
      Promise.resolve(p).then(function () { say(button, "Copied"); },
        function () { fallback(button, code); });
      return;
    }
    fallback(button, code);
  }

  var buttons = document.querySelectorAll("button.copy");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].hidden = false;
    buttons[i].addEventListener("click", function (ev) { copy(ev.currentTarget); });
  }
  // A trace excerpt ends at the failure: open it there, not at its first line.
  var traces = document.querySelectorAll("pre.trace");
  for (var j = 0; j < traces.length; j++) {
    traces[j].scrollTop = traces[j].scrollHeight;
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
