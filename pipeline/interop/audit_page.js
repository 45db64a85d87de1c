// The audit page's behaviour: keyboard labelling, saving labels at once (kept in this browser
// until the server has them), navigation, and the search of the initial state. Inlined by
// audit_base.html.j2 under the page's CSP nonce; the page's data comes from #page-data (JSON).
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const PENDING = "synth-audit-pending-" + data.instance;
  const NAME = "synth-audit-annotator";
  const notice = document.getElementById("notice");
  const nameInput = document.getElementById("annotator");

  function say(text, kind) {
    notice.textContent = text;
    notice.className = "show " + kind;
  }

  // ------------------------------------------------------------------ the annotator
  if (!nameInput.value && localStorage.getItem(NAME)) nameInput.value = localStorage.getItem(NAME);
  function rememberName() {
    const name = nameInput.value.trim();
    localStorage.setItem(NAME, name);
    document.cookie = data.name_cookie + "=" + encodeURIComponent(name) + "; path=/; SameSite=Strict";
  }
  nameInput.addEventListener("change", rememberName);
  if (nameInput.value) rememberName();
  function annotator() {
    const name = nameInput.value.trim();
    if (!name) {
      say("Type your name in the annotator box first (top right): every label carries it.", "error");
      nameInput.focus();
      return null;
    }
    return name;
  }

  // ------------------------------------------------------------------ saving labels
  function pending() {
    try { return JSON.parse(localStorage.getItem(PENDING) || "[]"); } catch (e) { return []; }
  }
  function setPending(list) { localStorage.setItem(PENDING, JSON.stringify(list)); }
  let retryTimer = null;
  let retryDelay = 2000;

  async function post(label) {
    let response;
    try {
      response = await fetch("/api/labels", {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json"}, body: JSON.stringify(label),
      });
    } catch (e) {
      return {state: "retry", message: "the audit server cannot be reached (stopped?)"};
    }
    let body = {};
    try { body = await response.json(); } catch (e) { body = {error: "HTTP " + response.status}; }
    if (response.ok) return {state: "saved", body: body};
    if (response.status === 503) return {state: "retry", message: body.error || "the catalog is busy"};
    return {state: "refused", message: body.error || ("HTTP " + response.status)};
  }

  // Send every label kept in this browser, oldest first; stop at the first that must wait. One
  // flush at a time: a call while one runs is chained after it.
  let chain = Promise.resolve(true);
  function flush() {
    chain = chain.then(sendPending, sendPending);
    return chain;
  }
  async function sendPending() {
    let list = pending();
    while (list.length) {
      const label = list[0];
      const result = await post(label);
      if (result.state === "retry") {
        say(list.length + " label(s) not saved yet: " + result.message + ". They are kept in this browser " +
            "and sent again in " + Math.round(retryDelay / 1000) + " s; do not clear this site's data.", "warn");
        clearTimeout(retryTimer);
        retryTimer = setTimeout(flush, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 15000);
        return false;
      }
      list = pending().filter(l => l.key !== label.key);
      setPending(list);
      if (result.state === "refused") {
        say("Row " + label.row + ": label refused: " + result.message, "error");
        return false;
      }
      retryDelay = 2000;
      if (label.row === data.row) showLabel(result.body);
    }
    return true;
  }

  async function save(label, code, comment) {
    const name = annotator();
    if (!name) return;
    const entry = {row: data.row, label: label, code: code || null, comment: comment || null, annotator: name,
                   key: Date.now() + "-" + Math.random()};
    setPending(pending().concat([entry]));
    say("saving " + label + "…", "ok");
    if (await flush()) {
      say("saved: " + label + (code ? " (" + code + ")" : "") + (data.next_row !== null ? "; next package…" : ""), "ok");
      setTimeout(() => { location.href = data.next_row !== null ? "/item/" + data.next_row : "/"; }, 250);
    }
  }

  function showLabel(stored) {
    const table = document.getElementById("labels");
    if (!table || !stored) return;
    data.labels.push(stored);
    const empty = table.querySelector("tr.empty");
    if (empty) empty.remove();
    for (const row of table.querySelectorAll("tr[data-annotator]")) {
      if (row.dataset.annotator === stored.annotator) row.remove();
    }
    const tr = document.createElement("tr");
    tr.dataset.annotator = stored.annotator;
    const tag = document.createElement("span");
    tag.className = "tag " + stored.label;
    tag.textContent = stored.label;
    const cells = [stored.annotator, tag, stored.code || "", stored.comment || "", "just now"];
    for (const value of cells) {
      const td = document.createElement("td");
      if (typeof value === "string") td.textContent = value; else td.appendChild(value);
      tr.appendChild(td);
    }
    table.appendChild(tr);
  }

  function myLabel() {
    const name = nameInput.value.trim();
    const mine = data.labels.filter(l => l.annotator === name);
    return mine.length ? mine[mine.length - 1] : null;
  }

  // ------------------------------------------------------------------ dialogs
  let open = null;
  function show(id) { open = document.getElementById(id); open.hidden = false; }
  function close() {
    if (open) open.hidden = true;
    open = null;
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();  // keys label again
  }

  let pendingComment = null;
  function defectDialog() {
    show("defect");
    const input = document.getElementById("defect-input");
    const list = document.getElementById("defect-codes");
    let chosen = 0;
    let shown = [];
    function draw() {
      const text = input.value.trim().toLowerCase();
      shown = data.codes.filter(c => !text || c.code.includes(text) || c.description.toLowerCase().includes(text));
      list.replaceChildren(...shown.map((c, n) => {
        const li = document.createElement("li");
        if (n === chosen) li.className = "chosen";
        const code = document.createElement("code");
        code.textContent = c.code;
        li.append(code, " – " + c.description);
        li.addEventListener("click", () => { close(); save("defective", c.code, pendingComment); });
        return li;
      }));
    }
    input.value = "";
    input.oninput = () => { chosen = 0; draw(); };
    input.onkeydown = (event) => {
      if (event.key === "ArrowDown") { chosen = Math.min(chosen + 1, shown.length - 1); draw(); event.preventDefault(); }
      else if (event.key === "ArrowUp") { chosen = Math.max(chosen - 1, 0); draw(); event.preventDefault(); }
      else if (event.key === "Enter") {
        event.preventDefault();
        const free = input.value.trim();
        close();
        if (shown.length && shown[chosen]) save("defective", shown[chosen].code, pendingComment);
        else save("defective", null, [pendingComment, free].filter(Boolean).join(" / "));
      } else if (event.key === "Escape") { close(); }
    };
    draw();
    input.focus();
  }

  function commentDialog() {
    show("comment");
    const input = document.getElementById("comment-input");
    input.value = pendingComment || "";
    input.onkeydown = (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        const text = input.value.trim();
        close();
        const mine = myLabel();
        if (mine) save(mine.label, mine.code, text);
        else { pendingComment = text; say("Comment kept: it is saved with the label you give next (a, d or u).", "ok"); }
      } else if (event.key === "Escape") { close(); }
    };
    input.focus();
  }

  // ------------------------------------------------------------------ the state search
  const search = document.getElementById("state-search");
  if (search) {
    search.addEventListener("input", () => {
      const text = search.value.trim().toLowerCase();
      let hits = 0;
      for (const section of document.querySelectorAll("details.state")) {
        let found = 0;
        for (const tr of section.querySelectorAll("tbody tr")) {
          const match = !text || tr.textContent.toLowerCase().includes(text);
          tr.classList.toggle("hidden", !match);
          if (match) found++;
        }
        if (text) section.open = found > 0;
        hits += found;
      }
      document.getElementById("state-count").textContent = text ? hits + " record(s) match" : "";
    });
  }

  // ------------------------------------------------------------------ the queue's cursor
  const rows = Array.from(document.querySelectorAll("#queue tr[data-row]"));
  let cursor = -1;
  function move(step) {
    if (!rows.length) return;
    if (cursor >= 0) rows[cursor].classList.remove("current");
    cursor = Math.max(0, Math.min(rows.length - 1, cursor + step));
    rows[cursor].classList.add("current");
    rows[cursor].scrollIntoView({block: "nearest"});
  }

  // ------------------------------------------------------------------ keys
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (open) { if (event.key === "Escape") close(); return; }
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const key = event.key;
    const item = data.page === "item";
    if (key === "?") show("help");
    else if (key === "q") location.href = "/";
    else if (item && key === "a") save("accept", null, pendingComment);
    else if (item && key === "u") save("unsure", null, pendingComment);
    else if (item && key === "d") { if (annotator()) defectDialog(); }
    else if (item && key === "c") commentDialog();
    else if (item && key === "/") { event.preventDefault(); search.focus(); }
    else if (item && (key === "j" || key === "ArrowRight")) { if (data.next_row !== null) location.href = "/item/" + data.next_row; }
    else if (item && (key === "k" || key === "ArrowLeft")) { if (data.prev_row !== null) location.href = "/item/" + data.prev_row; }
    else if (!item && (key === "j" || key === "ArrowDown")) move(1);
    else if (!item && (key === "k" || key === "ArrowUp")) move(-1);
    else if (!item && key === "Enter" && cursor >= 0) location.href = "/item/" + rows[cursor].dataset.row;
    else return;
    event.preventDefault();
  });

  if (pending().length) flush();
})();
