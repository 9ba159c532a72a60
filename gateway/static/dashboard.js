// The semcache dashboard. It reads and acts only through the admin API, with the token the operator typed
// (kept in sessionStorage for this tab). Data goes into the page as text (textContent), never as markup.
"use strict";

const TOKEN_KEY = "semcacheAdminToken";
const OUTCOMES = ["HIT", "PARTIAL", "MISS", "BYPASS"];
const COLORS = { HIT: "#12b76a", PARTIAL: "#4ea1ff", MISS: "#f79009", BYPASS: "#98a2b3" };
const PALETTE = ["#4ea1ff", "#12b76a", "#f79009", "#e04f5f", "#7a5af8", "#06aed4", "#98a2b3", "#1d2430"];
const charts = {};
let current = null;          // the entry shown in the detail panel

const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem(TOKEN_KEY); }

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { "Authorization": "Bearer " + token(), "Content-Type": "application/json", ...(options.headers || {}) },
  });
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin("The admin token was refused.");
    throw new Error("unauthorized");
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error((body.error && body.error.message) || ("HTTP " + response.status));
  }
  return body;
}

// ---- sign in ------------------------------------------------------------------------------------------
function showLogin(message) {
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
}

async function signIn(event) {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token").value);
  try {
    await api("/admin/stats");
  } catch (error) {
    if (error.message !== "unauthorized") showLogin(error.message);
    return;
  }
  $("token").value = "";
  start();
}

function start() {
  $("login").hidden = true;
  $("app").hidden = false;
  refresh();
}

// ---- tables -------------------------------------------------------------------------------------------
function fillTable(table, headers, rows, onClick) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const h of headers) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row.cells) tr.insertCell().textContent = cell === null || cell === undefined ? "" : String(cell);
    if (onClick) {
      tr.className = "clickable";
      tr.addEventListener("click", () => onClick(row.value));
    }
  }
}

const fmt = (x, digits = 0) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");

// ---- overview -----------------------------------------------------------------------------------------
function card(label, value) {
  const div = document.createElement("div");
  div.className = "card";
  const l = document.createElement("div");
  l.className = "label";
  l.textContent = label;
  const v = document.createElement("div");
  v.className = "value";
  v.textContent = value;
  div.append(l, v);
  return div;
}

function lineChart(id, x, series) {
  const element = $(id);
  const width = Math.max(element.clientWidth || 460, 300);
  const options = {
    width, height: 220,
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color || PALETTE[i % PALETTE.length],
                                           width: 1.5, spanGaps: true, scale: s.scale || "y" }))],
    axes: [{}, { scale: "y" }, ...(series.some((s) => s.scale === "r")
      ? [{ scale: "r", side: 1, grid: { show: false } }] : [])],
    scales: { x: { time: true } },
  };
  if (charts[id]) charts[id].destroy();
  element.replaceChildren();
  charts[id] = new uPlot(options, [x, ...series.map((s) => s.values)], element);
}

function renderOverview(stats, timeline) {
  const totals = timeline.totals;
  const eligible = totals.HIT + totals.PARTIAL + totals.MISS;
  $("cards").replaceChildren(
    ...OUTCOMES.map((o) => card(o, fmt(totals[o]))),
    card("hit rate", eligible ? pct(totals.HIT / eligible) : "–"),
    card("partial rate", eligible ? pct(totals.PARTIAL / eligible) : "–"),
    card("precision proxy", pct(totals.precision_proxy)),
    card("cache pollution", fmt(totals.pollution)),
    card("saved prefill tokens", fmt(totals.saved_prefill)),
    card("saved decode tokens", fmt(totals.saved_decode)),
    card("entries ready", fmt((stats.cache.entries || {}).ready || 0)),
  );
  const x = timeline.buckets;
  lineChart("chart-outcomes", x, OUTCOMES.map((o) => ({ label: o, color: COLORS[o], values: timeline.outcomes[o] })));
  lineChart("chart-saved", x, [{ label: "prefill", values: timeline.saved_prefill },
                               { label: "decode", values: timeline.saved_decode }]);
  lineChart("chart-quality", x, [{ label: "pollution", color: "#e04f5f", values: timeline.pollution },
                                 { label: "precision proxy", color: "#12b76a", scale: "r",
                                   values: timeline.precision_proxy }]);
  const reasons = Object.entries(timeline.reasons);
  lineChart("chart-reasons", x, reasons.map(([label, values]) => ({ label, values })));
  const latency = [];
  for (const [outcome, q] of Object.entries(timeline.latency)) {
    latency.push({ label: outcome + " p50", color: COLORS[outcome], values: q.p50 });
    latency.push({ label: outcome + " p95", color: COLORS[outcome], values: q.p95 });
  }
  lineChart("chart-latency", x, latency);
  fillTable($("reasons-table"), ["outcome and reason", "requests"],
            reasons.map(([label, values]) => ({ cells: [label, values.reduce((a, b) => a + b, 0)] })));
  fillTable($("domains-table"), ["domain", "entries ready", "entries pending", "entries invalid", "hits (entries)",
                                 "requests (window)", "hits (window)", "pollution (window)"],
            timeline.domains.map((d) => ({ cells: [d.domain, d.entries.ready || 0, d.entries.pending || 0,
                                                  d.entries.invalid || 0, d.entry_hits, d.requests || 0,
                                                  d.hits || 0, d.pollution || 0] })));
  fillTable($("replicas-table"), ["backend replica", "state", "in flight", "requests", "errors", "ejections",
                                  "KV cached share"],
            (stats.replicas || []).map((r) => ({ cells: [r.name, r.state, r.in_flight, r.requests, r.errors,
                                                         r.ejections, pct(r.cached_share)] })));
  const health = stats.health || {};
  fillTable($("health-table"), ["store", "state"], [
    { cells: ["database", health.database ? "up" : "down"] },
    { cells: ["redis", health.redis === null || health.redis === undefined ? "not used" : (health.redis ? "up" : "down")] },
    { cells: ["cache breaker", stats.breaker ? stats.breaker.state : "–"] },
    { cells: ["indexed entries", stats.cache.indexed] },
  ]);
}

async function refresh() {
  try {
    const [stats, timeline] = await Promise.all([api("/admin/stats"),
                                                 api("/admin/timeline?window=" + $("window").value)]);
    renderOverview(stats, timeline);
    $("app-error").textContent = "";
    $("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.dataset.loaded = "true";
  } catch (error) {
    if (error.message !== "unauthorized") $("app-error").textContent = error.message;
  }
}

// ---- entries ------------------------------------------------------------------------------------------
async function search(event) {
  if (event) event.preventDefault();
  const params = new URLSearchParams({ limit: "100" });
  const fields = { q: "search-text", session_id: "search-session", intent_domain: "search-domain", state: "search-state" };
  for (const [key, id] of Object.entries(fields)) if ($(id).value.trim()) params.set(key, $(id).value.trim());
  try {
    const result = await api("/admin/entries?" + params);
    fillTable($("entries-table"), ["cache id", "domain", "state", "scope", "session", "hits", "feedback", "created"],
              result.entries.map((e) => ({ value: e, cells: [e.cache_id, e.intent_domain, e.state, e.scope,
                                                             e.session_id, e.hit_count, e.feedback_score,
                                                             e.created_at] })),
              showEntry);
    $("entries-table").dataset.count = String(result.count);
  } catch (error) {
    if (error.message !== "unauthorized") $("app-error").textContent = error.message;
  }
}

async function showEntry(entry) {
  current = entry;
  $("entry-detail").hidden = false;
  $("entry-title").textContent = entry.cache_id + " (" + entry.state + ", " + entry.scope + ")";
  $("entry-message").textContent = "";
  $("entry-request").textContent = entry.request_text;
  $("entry-answer").textContent = entry.answer_text;
  $("entry-evidence").textContent = JSON.stringify({ tags: entry.tags, key_facts: entry.key_facts, usage: entry.usage,
                                                     feedback_score: entry.feedback_score, hit_count: entry.hit_count,
                                                     saved_tokens: entry.saved_tokens }, null, 2);
  const history = await api("/admin/entries/" + entry.cache_id + "/events");
  fillTable($("entry-events"), ["at", "event", "detail"],
            history.events.map((e) => ({ cells: [e.at, e.kind, JSON.stringify(e.detail)] })));
}

async function act(action) {
  if (!current) return;
  const words = { invalidate: "Invalidate", promote: "Promote to the tenant's global pool", demote: "Demote to its session" };
  if (!window.confirm(words[action] + " entry " + current.cache_id + "?")) return;
  try {
    if (action === "invalidate") {
      await api("/admin/invalidate", { method: "POST", body: JSON.stringify({ cache_id: current.cache_id }) });
    } else {
      await api("/admin/entries/" + current.cache_id + "/" + action, { method: "POST" });
    }
    const fresh = await api("/admin/entries/" + current.cache_id);
    await search();
    await showEntry(fresh);          // (clears the message: it is written after)
    $("entry-message").textContent = action + ": done (" + fresh.state + ", " + fresh.scope + ")";
  } catch (error) {
    if (error.message !== "unauthorized") $("entry-message").textContent = error.message;
  }
}

// ---- wiring -------------------------------------------------------------------------------------------
function switchTab(name) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.tab === name);
  $("overview").hidden = name !== "overview";
  $("entries").hidden = name !== "entries";
  if (name === "entries") search();
}

$("login-form").addEventListener("submit", signIn);
$("logout").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); showLogin(""); });
$("window").addEventListener("change", refresh);
$("search-form").addEventListener("submit", search);
for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => switchTab(tab.dataset.tab));
$("entry-invalidate").addEventListener("click", () => act("invalidate"));
$("entry-promote").addEventListener("click", () => act("promote"));
$("entry-demote").addEventListener("click", () => act("demote"));
setInterval(() => { if (token() && !$("app").hidden && !$("overview").hidden) refresh(); }, 30000);
if (token()) start(); else showLogin("");
