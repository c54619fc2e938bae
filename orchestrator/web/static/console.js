// orchestrator console: polls /api/state, renders pending items, signs decisions with a passkey (WebAuthn).
// Plain DOM (textContent only: nothing the server sends is parsed as HTML). Served by `orch console`.
"use strict";

(function () {
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const POLL_MS = 1500;
  const HIGH_RISKS = new Set(["force-push", "history-rewrite", "recursive-delete"]);
  const rendered = new Map(); // "kind:id" -> article element
  let lastState = null;
  let serverSkew = 0; // server clock minus ours, for "expires in"

  // ------------------------------------------------------------------ helpers
  function $(sel, root) { return (root || document).querySelector(sel); }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function b64url(buf) {
    const bytes = new Uint8Array(buf);
    let s = "";
    for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function unb64url(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  }
  function announce(text) {
    const a = $("#announcer");
    a.textContent = "";
    window.setTimeout(() => { a.textContent = text; }, 50);
  }
  function showAlert(text) {
    const a = $("#alert");
    a.textContent = text || "";
    a.hidden = !text;
  }
  function ago(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s >= 86400) return Math.floor(s / 86400) + " d";
    if (s >= 3600) return Math.floor(s / 3600) + " h";
    if (s >= 60) return Math.floor(s / 60) + " min";
    return s + " s";
  }
  async function post(path, body) {
    const res = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await res.json(); } catch (e) { data = {}; }
    if (!res.ok || data.error) {
      const err = data.error || { message: "HTTP " + res.status };
      const e = new Error(err.message + (err.hint ? " — " + err.hint : ""));
      e.info = err;
      throw e;
    }
    return data;
  }
  function errorText(e) {
    if (e && e.name === "NotAllowedError") return "The passkey prompt was cancelled or timed out; nothing was decided.";
    if (e && e.name === "SecurityError") return "The browser refused the passkey for this address (" + e.message + "). Open the console at the address `orch console` printed.";
    return (e && e.message) || String(e);
  }

  // ------------------------------------------------------------------ WebAuthn
  function webauthnAvailable() {
    return window.isSecureContext && window.PublicKeyCredential && navigator.credentials;
  }
  // PublicKeyCredential.toJSON(), written out: older browsers lack it
  function credentialJSON(cred, response) {
    return {
      id: cred.id, rawId: b64url(cred.rawId), type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || null,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: b64url(cred.response.clientDataJSON), ...response },
    };
  }
  function assertionJSON(cred) {
    const r = cred.response;
    return credentialJSON(cred, {
      authenticatorData: b64url(r.authenticatorData), signature: b64url(r.signature),
      userHandle: r.userHandle ? b64url(r.userHandle) : null,
    });
  }
  function registrationJSON(cred) {
    const r = cred.response;
    return credentialJSON(cred, {
      attestationObject: b64url(r.attestationObject), transports: r.getTransports ? r.getTransports() : [],
    });
  }
  function needPasskeys() {
    if (!webauthnAvailable()) throw new Error("This browser offers no passkeys here (a secure context is needed: open http://localhost:PORT or https).");
  }
  // the assertion over the challenge the console computed (the hash of what is decided or changed)
  async function getAssertion(opts) {
    const cred = await navigator.credentials.get({
      publicKey: {
        challenge: unb64url(opts.challenge), rpId: opts.rpId, timeout: opts.timeout,
        userVerification: opts.userVerification,
        allowCredentials: opts.allowCredentials.map((c) => ({ type: c.type, id: unb64url(c.id) })),
      },
    });
    return assertionJSON(cred);
  }
  async function sign(item, action, reason, edits) {
    needPasskeys();
    const base = "/api/items/" + encodeURIComponent(item.kind) + "/" + encodeURIComponent(item.id);
    const body = { decision: action.decision, scope: action.scope, reason: reason || null };
    if (edits) body.edits = edits;
    const opts = await post(base + "/challenge", body);
    body.assertion = await getAssertion(opts);
    return post(base + "/decide", body);
  }
  // an intent change: the console prepares it (validated, held) and answers its challenge; the page sends back
  // only the operation's id and the assertion
  async function signIntent(op, intent, fields) {
    needPasskeys();
    const opts = await post("/api/intents/challenge", { op: op, intent: intent, fields: fields });
    const assertion = await getAssertion(opts);
    return post("/api/intents/apply", { operation: opts.operation.nonce, assertion: assertion });
  }

  // ------------------------------------------------------------------ items
  function setResult(article, text, good) {
    const r = $(".result", article);
    r.textContent = text;
    r.className = "result " + (good === true ? "good" : good === false ? "bad" : "");
  }
  function setBusy(article, busy) {
    article.querySelectorAll("button").forEach((b) => {
      if (busy) { b.dataset.wasDisabled = b.disabled ? "1" : ""; b.disabled = true; }
      else { b.disabled = b.dataset.wasDisabled === "1"; }
    });
    article.setAttribute("aria-busy", busy ? "true" : "false");
  }
  async function runDecision(article, item, action, reason, edits) {
    setBusy(article, true);
    setResult(article, "Waiting for your passkey…");
    try {
      const res = await sign(item, action, reason, edits);
      const who = res.approver ? " (signed by " + res.approver + ")" : "";
      const verb = action.decision === "approve" ? "Approved" : "Rejected";
      setResult(article, verb + who + ": " + res.message, true);
      announce(verb + " " + item.title + who);
    } catch (e) {
      setResult(article, errorText(e), false);
      announce("Not decided: " + errorText(e));
      setBusy(article, false);
      return;
    }
    setBusy(article, false);
    poll();
  }
  function fillPreview(figure, preview) {
    if (!preview) { figure.hidden = true; return; }
    figure.hidden = false;
    $("figcaption", figure).textContent = preview.label;
    const code = $("code", figure);
    code.textContent = "";
    if (preview.language === "diff") {
      preview.text.split("\n").forEach((line, i, all) => {
        const cls = line.startsWith("+") && !line.startsWith("+++") ? "diff-add"
          : line.startsWith("-") && !line.startsWith("---") ? "diff-del" : "";
        code.appendChild(el("span", line + (i < all.length - 1 ? "\n" : ""), cls));
      });
    } else {
      code.textContent = preview.text;
    }
    $("pre", figure).setAttribute("aria-label", preview.label);
  }
  function buildItem(item) {
    const tpl = $("#item-template").content.firstElementChild.cloneNode(true);
    const key = item.kind + ":" + item.id;
    const headingId = "item-" + key.replace(/[^A-Za-z0-9_-]/g, "-");
    tpl.id = headingId + "-article";
    tpl.dataset.key = key;
    $(".item-title", tpl).id = headingId;
    tpl.setAttribute("aria-labelledby", headingId);
    $(".item-title", tpl).textContent = item.title;
    const risk = (item.facts.find((f) => f[0] === "Risk") || [null, ""])[1];
    $(".risk", tpl).textContent = risk;
    if (HIGH_RISKS.has(risk)) tpl.classList.add("high");
    const dl = $(".facts", tpl);
    item.facts.forEach(([k, v]) => { dl.appendChild(el("dt", k)); dl.appendChild(el("dd", v)); });
    const ul = $(".reasons", tpl);
    item.reasons.forEach((r) => ul.appendChild(el("li", r)));
    ul.hidden = item.reasons.length === 0;
    if (item.reasons.length) ul.setAttribute("aria-label", "Why a person decides");
    fillPreview($(".preview", tpl), item.preview);
    const note = $(".note", tpl);
    note.textContent = item.note || "";
    note.hidden = !item.note;
    const actions = $(".actions", tpl);
    actions.setAttribute("aria-label", "Decide " + item.title);
    const form = $(".reject-form", tpl);
    const decidable = item.signed && !item.note;
    item.actions.forEach((action) => {
      const b = el("button", action.label,
        action.decision === "reject" ? "danger" : action.scope === "once" && !action.edit ? "primary" : "");
      b.type = "button";
      b.dataset.decision = action.decision;
      b.dataset.scope = action.scope;
      if (!decidable || action.disabled) {
        b.disabled = true;
        if (action.disabled) b.title = action.disabled;
        if (action.disabled) b.setAttribute("aria-description", action.disabled);
      }
      b.addEventListener("click", () => {
        if (action.edit) {
          intentForm.open("accept", { item: item, action: action, article: tpl, opener: b });
          return;
        }
        if (action.reason) {
          form.hidden = false;
          $("textarea", form).focus();
          return;
        }
        runDecision(tpl, item, action, null);
      });
      actions.appendChild(b);
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const reason = $("textarea", form).value.trim();
      if (!reason) { setResult(tpl, "Type a reason: the agent reads it to change course.", false); return; }
      form.hidden = true;
      runDecision(tpl, item, { decision: "reject", scope: "once" }, reason);
    });
    const cancel = () => { form.hidden = true; $('[data-decision="reject"]', actions).focus(); };
    $(".cancel", form).addEventListener("click", cancel);
    form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") cancel(); });
    return tpl;
  }
  function updateItem(article, item, now) {
    const left = item.expires - now;
    $(".expires", article).textContent = item.state === "decided" ? "decision sent, waiting for the agent"
      : left > 0 ? "expires in " + ago(left) : "expired";
    article.classList.toggle("decided", item.state === "decided");
  }
  function renderItems(state) {
    const now = Date.now() / 1000 + serverSkew;
    const container = $("#items");
    const seen = new Set();
    state.items.forEach((item) => {
      const key = item.kind + ":" + item.id;
      seen.add(key);
      let article = rendered.get(key);
      if (!article) {
        article = buildItem(item);
        rendered.set(key, article);
        container.appendChild(article);
      }
      updateItem(article, item, now);
    });
    for (const [key, article] of rendered) {
      if (!seen.has(key)) {
        const hadFocus = article.contains(document.activeElement);
        if (article.contains(intentForm.form)) intentForm.close(false);
        article.remove();
        rendered.delete(key);
        if (hadFocus) $("#pending-heading").focus();
      }
    }
    $("#pending-empty").hidden = state.items.length > 0;
    const count = $("#pending-count");
    const pending = state.items.filter((i) => i.state === "pending").length;
    count.textContent = String(pending);
    count.classList.toggle("has", pending > 0);
    count.setAttribute("aria-label", pending + " pending");
    const errs = $("#item-errors");
    errs.textContent = state.item_errors.join("; ");
    errs.hidden = state.item_errors.length === 0;
    document.title = (pending ? "(" + pending + ") " : "") + document.title.replace(/^\(\d+\) /, "");
  }

  // ------------------------------------------------------------------ tables and status
  function fillTable(id, rows, columns) {
    const body = $("#" + id + " tbody");
    body.textContent = "";
    if (!rows.length) {
      const tr = el("tr");
      const td = el("td", "none", "muted");
      td.colSpan = columns.length;
      tr.appendChild(td);
      body.appendChild(tr);
      return;
    }
    rows.forEach((row) => {
      const tr = el("tr");
      columns.forEach((c) => tr.appendChild(el("td", row[c] === undefined || row[c] === null ? "" : row[c])));
      body.appendChild(tr);
    });
  }
  function renderPasskey(p) {
    const status = $("#passkey-status");
    let text;
    let bad = false;
    if (p.error) { text = "Passkeys: " + p.error; bad = true; }
    else if (!p.approvers.length) { text = "No approver is registered yet: run `orch approver add NAME`."; bad = true; }
    else text = "Approvers: " + p.approvers.join(", ") + " · relying party " + p.rp_id;
    if (!p.origin_ok) { text += " · this address is not in approval.passkey.origins: the hook would refuse decisions made here"; bad = true; }
    const host = location.hostname;
    if (host !== p.rp_id && !host.endsWith("." + p.rp_id)) {
      text += " · passkeys for " + p.rp_id + " cannot be used at " + host; bad = true;
    }
    if (!webauthnAvailable()) { text += " · this browser offers no passkeys here (open http://localhost:PORT or https)"; bad = true; }
    if (p.channel && p.channel !== "passkey") text += " · approval channel: " + p.channel;
    status.textContent = text;
    status.classList.toggle("bad", bad);
  }
  function render(state) {
    lastState = state;
    serverSkew = state.now - Date.now() / 1000;
    renderItems(state);
    renderPasskey(state.passkey);
    const ie = $("#intents-error");
    ie.textContent = state.intents_error || "";
    ie.hidden = !state.intents_error;
    renderIntents(state.intents);
    fillTable("sessions", state.sessions, ["id", "worktree", "intent", "agent", "seen"]);
    fillTable("ledger", state.ledger, ["time", "intent", "tool", "mutation", "files", "approver"]);
  }
  // ------------------------------------------------------------------ intents (new / edit / done / archive)
  const FINISHED = ["COMPLETED", "CANCELLED", "ABANDONED"];
  const STATUSES = ["PENDING", "IN_PROGRESS", "BLOCKED", "ON_HOLD"].concat(FINISHED);
  const LIST_FIELDS = ["owned_scope", "constraints", "acceptance_criteria"];
  const FORM_FIELDS = ["name", "status", "owned_scope", "constraints", "acceptance_criteria", "owner", "description"];
  const MODES = {
    "new": { title: () => "New intent", submit: "Sign and create", fields: FORM_FIELDS, statuses: STATUSES },
    "edit": { title: (id) => "Edit " + id, submit: "Sign and save", fields: FORM_FIELDS, statuses: STATUSES },
    "done": { title: (id) => "Finish " + id, submit: "Sign and finish", fields: ["status"], statuses: FINISHED },
    "archive": { title: (id) => "Archive " + id, submit: "Sign and archive", fields: [], statuses: [] },
    "accept": { title: () => "Edit the proposal, then accept it", submit: "Sign and accept",
                fields: FORM_FIELDS.filter((f) => f !== "status"), statuses: [] },
  };
  let intentsShown = null;
  const intentForm = {
    form: null, mode: null, ctx: null,
    open(mode, ctx) {
      const f = this.form;
      const m = MODES[mode];
      this.mode = mode; this.ctx = ctx;
      const values = mode === "accept" ? ctx.item.proposal : mode === "new" ? { status: "IN_PROGRESS" } : ctx.entry;
      $("#intent-form-title").textContent = m.title(ctx.id);
      $("#intent-submit").textContent = m.submit;
      const select = f.elements.status;
      select.textContent = "";
      m.statuses.forEach((s) => { const o = el("option", s); o.value = s; select.appendChild(o); });
      FORM_FIELDS.forEach((name) => {
        const shown = m.fields.includes(name);
        $(".f-" + name, f).hidden = !shown;
        const input = f.elements[name];
        const v = values ? values[name] : null;
        input.value = Array.isArray(v) ? v.join("\n") : v === undefined || v === null ? "" : String(v);
      });
      if (mode === "done") select.value = "COMPLETED";
      $("#intent-result").textContent = "";
      // next to what it changes: under the proposal it accepts, else under the intents table
      if (mode === "accept") ctx.article.insertBefore(f, $(".result", ctx.article));
      else $("#intent-result").before(f);
      f.hidden = false;
      const first = m.fields.length ? f.elements[m.fields[0]] : $("#intent-submit");
      first.focus();
    },
    close(refocus) {
      this.form.hidden = true;
      $("#intent-result").before(this.form); // home again (an item it sat in may go away)
      const opener = this.ctx && this.ctx.opener;
      this.mode = null; this.ctx = null;
      if (refocus && opener && document.contains(opener)) opener.focus();
      else if (refocus) $("#intents-heading").focus();
    },
    values() {
      const out = {};
      MODES[this.mode].fields.forEach((name) => {
        const raw = this.form.elements[name].value;
        out[name] = LIST_FIELDS.includes(name) ? raw.split("\n").map((l) => l.trim()).filter((l) => l) : raw.trim();
      });
      return out;
    },
    // the fields of a proposal the person changed (none: accept as proposed)
    edits(proposal, values) {
      const out = {};
      Object.keys(values).forEach((k) => {
        const was = proposal[k] === undefined ? (LIST_FIELDS.includes(k) ? [] : "") : proposal[k];
        if (JSON.stringify(was) !== JSON.stringify(values[k])) out[k] = values[k];
      });
      return Object.keys(out).length ? out : null;
    },
    async submit() {
      const mode = this.mode, ctx = this.ctx;
      const values = this.values();
      if (mode === "accept") {
        this.close(false);
        ctx.opener.focus();
        return runDecision(ctx.article, ctx.item, ctx.action, null, this.edits(ctx.item.proposal, values));
      }
      const result = $("#intent-result");
      const button = $("#intent-submit");
      button.disabled = true;
      result.className = "result";
      result.textContent = "Waiting for your passkey…";
      try {
        const res = await signIntent(mode, ctx.id || null, values);
        const text = ({ "new": "Created ", "edit": "Saved ", "done": "Finished ", "archive": "Archived " })[mode] +
          res.intent + " (signed by " + res.by + ")";
        this.close(false);
        result.className = "result good";
        result.textContent = text;
        announce(text);
        $("#intents-heading").focus();
        poll();
      } catch (e) {
        result.className = "result bad";
        result.textContent = "Not changed: " + errorText(e);
        announce("Not changed: " + errorText(e));
      } finally {
        button.disabled = false;
      }
    },
    init() {
      this.form = $("#intent-form");
      this.form.addEventListener("submit", (ev) => { ev.preventDefault(); this.submit(); });
      $("#intent-cancel").addEventListener("click", () => this.close(true));
      this.form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") this.close(true); });
      const add = $("#intent-new");
      add.addEventListener("click", () => this.open("new", { opener: add }));
    },
  };
  function intentButton(label, id, mode, entry) {
    const b = el("button", label);
    b.type = "button";
    b.setAttribute("aria-label", label.replace("…", "") + " " + id);
    b.dataset.intentOp = mode;
    b.addEventListener("click", () => intentForm.open(mode, { id: id, entry: entry, opener: b }));
    return b;
  }
  function renderIntents(rows) {
    const key = JSON.stringify(rows);
    if (key === intentsShown) return; // unchanged: keep the buttons (and the focus) where they are
    intentsShown = key;
    const focused = document.activeElement && document.activeElement.closest("#intents")
      ? document.activeElement.getAttribute("aria-label") : null;
    fillTable("intents", rows, ["id", "status", "name", "scope"]);
    const body = $("#intents tbody");
    [...body.rows].forEach((tr, i) => {
      const row = rows[i];
      if (!row) { tr.cells[0].colSpan = 5; return; }
      const td = el("td");
      const box = el("div", null, "row");
      if (row.entry) {
        box.appendChild(intentButton("Edit…", row.id, "edit", row.entry));
        if (FINISHED.includes(row.status)) box.appendChild(intentButton("Archive…", row.id, "archive", row.entry));
        else box.appendChild(intentButton("Finish…", row.id, "done", row.entry));
      }
      td.appendChild(box);
      tr.appendChild(td);
    });
    if (focused) {
      const again = [...body.querySelectorAll("button")].find((b) => b.getAttribute("aria-label") === focused);
      if (again) again.focus();
    }
  }

  let polling = false;
  async function poll() {
    if (polling) return;
    polling = true;
    try {
      const res = await fetch("/api/state", { credentials: "same-origin" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      render(await res.json());
      showAlert("");
    } catch (e) {
      showAlert("The console is not answering (" + errorText(e) + "); retrying.");
    } finally {
      polling = false;
    }
  }
  async function loadActivity(since) {
    const pre = $("#activity");
    try {
      const res = await fetch("/api/activity?since=" + encodeURIComponent(since), { credentials: "same-origin" });
      const data = await res.json();
      pre.textContent = data.error ? data.error.message : data.lines.join("\n");
    } catch (e) {
      pre.textContent = "cannot read the activity: " + errorText(e);
    }
  }

  // ------------------------------------------------------------------ registration (#register=TOKEN)
  async function registration(token) {
    const panel = $("#register");
    panel.hidden = false;
    const button = $("#register-button");
    const result = $("#register-result");
    let data;
    try {
      data = await post("/api/register/options", { token: token });
    } catch (e) {
      $("#register-text").textContent = errorText(e);
      return;
    }
    $("#register-text").textContent = "Create a passkey for approver " + data.name +
      ". Your browser or security key asks you to confirm; the public key is added to .orchestration/approvers.";
    button.disabled = false;
    button.focus();
    button.addEventListener("click", async () => {
      button.disabled = true;
      result.textContent = "Waiting for your authenticator…";
      try {
        const o = data.options;
        const cred = await navigator.credentials.create({
          publicKey: {
            ...o, challenge: unb64url(o.challenge), user: { ...o.user, id: unb64url(o.user.id) },
            excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: unb64url(c.id) })),
          },
        });
        const done = await post("/api/register/finish", { token: token, credential: registrationJSON(cred) });
        result.textContent = done.message;
        button.hidden = true;
        history.replaceState(null, "", location.pathname);
        poll();
      } catch (e) {
        result.textContent = "Not registered: " + errorText(e);
      }
    });
  }

  // ------------------------------------------------------------------ start
  function focusHashItem() {
    const m = /item=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (!m || !lastState) return;
    const article = rendered.get("approval:" + m[1]) || [...rendered.values()].find((a) => a.dataset.key.endsWith(":" + m[1]));
    if (article) { article.scrollIntoView(); article.focus(); }
  }
  document.addEventListener("DOMContentLoaded", async () => {
    intentForm.init();
    $("#activity-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadActivity($("#activity-since").value); });
    const reg = /register=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (reg) registration(reg[1]);
    await poll();
    focusHashItem();
    loadActivity("7d");
    window.setInterval(poll, POLL_MS);
    window.addEventListener("hashchange", focusHashItem);
  });
})();
