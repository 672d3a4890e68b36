// Enhancements only: every page works without this script.
// - Charts: hovering or moving along a chart shows the nearest day's value.
// - Copy buttons copy the text of the element they name.
(function () {
  "use strict";
  function readout(figure, mark) {
    var out = figure.querySelector(".readout");
    if (!out || !mark) return;
    var prev = figure.querySelector(".mark.active");
    if (prev) prev.classList.remove("active");
    mark.classList.add("active");
    var series = mark.getAttribute("data-series");
    out.textContent = (series ? series + ", " : "") + mark.getAttribute("data-date") + ": " + mark.getAttribute("data-value");
  }
  // The mouse position in the chart's own units, whatever its scale and placement.
  function chartX(svg, clientX, clientY) {
    var matrix = svg.getScreenCTM();
    if (!matrix) return null;
    var point = svg.createSVGPoint();
    point.x = clientX;
    point.y = clientY;
    return point.matrixTransform(matrix.inverse()).x;
  }
  function nearest(svg, clientX, clientY) {
    var marks = svg.querySelectorAll(".mark");
    var x = chartX(svg, clientX, clientY);
    if (!marks.length || x === null) return null;
    var best = null, bestDist = Infinity;
    for (var i = 0; i < marks.length; i++) {
      var d = Math.abs(marks[i].cx.baseVal.value - x);
      if (d < bestDist) { bestDist = d; best = marks[i]; }
    }
    return best;
  }
  document.querySelectorAll(".chart-box").forEach(function (figure) {
    var svg = figure.querySelector("svg.chart");
    if (!svg) return;
    svg.addEventListener("mousemove", function (e) { readout(figure, nearest(svg, e.clientX, e.clientY)); });
    svg.addEventListener("touchstart", function (e) {
      if (e.touches.length) readout(figure, nearest(svg, e.touches[0].clientX, e.touches[0].clientY));
    }, { passive: true });
  });
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        // The page says the word in its own language (the zh-CN guide: 已复制).
        button.textContent = button.getAttribute("data-copied") || "Copied";
      });
    });
  });
  // Table filters: a select naming a table shows only the rows of the chosen column.
  document.querySelectorAll("select[data-filters]").forEach(function (select) {
    var table = document.getElementById(select.getAttribute("data-filters"));
    if (!table) return;
    var holder = select.closest(".filter");
    if (holder) holder.hidden = false;
    var count = holder && holder.querySelector("[data-shown-of]");
    select.addEventListener("change", function () {
      var rows = table.querySelectorAll("tbody tr"), shown = 0;
      rows.forEach(function (row) {
        row.hidden = select.value !== "" && row.getAttribute("data-column") !== select.value;
        if (!row.hidden) shown++;
      });
      if (count) count.textContent = shown + " of " + rows.length + " problems shown. ";
    });
  });
})();
