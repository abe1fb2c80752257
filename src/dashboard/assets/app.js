// orq dashboard, the only script: re-fetches the page's live part
// ([data-poll]) and its charts ([data-chart], drawn with uPlot) every few
// seconds, and stops while the tab is hidden (visibilitychange). It builds no
// markup from data: live parts are HTML the server escaped, charts are numbers.
"use strict";
(function () {
  const body = document.body;
  const refreshMs = Number(body.dataset.refreshMs) || 3000;
  const palette = ["#2563eb", "#16a34a", "#9333ea", "#ea580c", "#dc2626", "#0891b2"];
  const plots = new Map();
  let timer = null;
  let refreshes = 0;

  async function refreshPart(el) {
    const response = await fetch(el.dataset.poll, { credentials: "same-origin", redirect: "manual", headers: { "x-orq-part": "live" } });
    if (response.type === "opaqueredirect" || response.status === 401) {
      // Signed out or the session expired: the full page shows the sign-in form.
      location.reload();
      return;
    }
    if (!response.ok) {
      el.classList.add("stale");
      return;
    }
    el.innerHTML = await response.text();
    el.classList.remove("stale");
  }

  function chartOptions(el, labels) {
    return {
      width: Math.max(240, el.clientWidth),
      height: 200,
      legend: { live: false },
      scales: { x: { time: true } },
      series: [{}].concat(labels.map((label, i) => ({ label, stroke: palette[i % palette.length], width: 1.5, points: { show: false } }))),
    };
  }

  async function refreshChart(el) {
    const response = await fetch(el.dataset.chart, { credentials: "same-origin", redirect: "manual" });
    if (!response.ok) return;
    const chart = await response.json();
    const plot = plots.get(el);
    if (plot !== undefined && plot.series.length === chart.labels.length + 1) {
      plot.setData(chart.data);
      return;
    }
    if (plot !== undefined) plot.destroy();
    if (typeof uPlot !== "function") return;
    plots.set(el, new uPlot(chartOptions(el, chart.labels), chart.data, el));
  }

  async function refresh() {
    const parts = Array.from(document.querySelectorAll("[data-poll]"), refreshPart);
    const charts = Array.from(document.querySelectorAll("[data-chart]"), refreshChart);
    await Promise.allSettled(parts.concat(charts));
    refreshes += 1;
    body.dataset.refreshes = String(refreshes);
  }

  function schedule() {
    clearTimeout(timer);
    timer = null;
    if (document.hidden) return;
    timer = setTimeout(() => refresh().finally(schedule), refreshMs);
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      clearTimeout(timer);
      timer = null;
    } else {
      refresh().finally(schedule);
    }
  });

  // Charts are drawn at once; live parts came with the page, so they wait one period.
  Promise.allSettled(Array.from(document.querySelectorAll("[data-chart]"), refreshChart)).finally(schedule);
})();
