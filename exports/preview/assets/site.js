(function () {
  "use strict";
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#items tbody tr"));
  var count = document.getElementById("shown");
  if (!form || !rows.length) { return; }
  form.hidden = false;
  function apply() {
    var want = {};
    ["type", "topic", "status", "difficulty", "finding"].forEach(function (name) {
      want[name] = form.elements[name].value;
    });
    var words = form.elements.q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = (!want.type || d.type === want.type) &&
        (!want.topic || d.topic === want.topic || d.topic.indexOf(want.topic + "/") === 0) &&
        (!want.status || d.status === want.status) &&
        (!want.difficulty || d.difficulty === want.difficulty) &&
        (!want.finding || (want.finding === "any" ? d.findings !== "" :
          want.finding === "none" ? d.findings === "" :
          (" " + d.findings + " ").indexOf(" " + want.finding + " ") !== -1)) &&
        words.every(function (w) { return d.search.indexOf(w) !== -1; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " items shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (e) { e.preventDefault(); apply(); });
  apply();
}());
