"""The memory panel in a real browser: `agentmem ui` on a database this test fills, driven by
headless Chromium through Selenium.

Each page is loaded and photographed; a search, a verify, a confirm and a reject in the review
queue, an archive and a claim are clicked, and the database is read afterwards. Hostile
content (markup, script, javascript: URLs, RTL overrides, a megabyte of text) must render as
text: no script runs, no element is injected, every link stays a route of the panel. Calls
without the token, to another host or from another origin are refused. axe-core runs on
every page: no serious or critical violation.

Usage: panel_test.py --agentmem BIN (--db FILE --extension SO | --pg DSN) --axe AXE_JS
       --shots DIR --name NAME
"""

import argparse
import http.client
import http.server
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCE = "project:demo"
MEGABYTE = 1 << 20


class Database:
    """The filled database, read back with plain SQL (the same statements on both)."""

    def __init__(self, args):
        if args.pg:
            import psycopg

            self.conn = psycopg.connect(args.pg, autocommit=True)
            self.mark = "%s"
        else:
            self.conn = sqlite3.connect(args.db, isolation_level=None)
            self.conn.enable_load_extension(True)
            self.conn.load_extension(args.extension)
            self.conn.execute("SELECT mem_init()")
            self.mark = "?"

    def all(self, sql, *params):
        cur = self.conn.cursor()
        if params:
            cur.execute(sql.replace("?", self.mark), params)
        else:
            cur.execute(sql)
        return cur.fetchall()

    def one(self, sql, *params):
        rows = self.all(sql, *params)
        return rows[0] if rows else None

    def script(self, text):
        for stmt in text.split(";\n"):
            body = "\n".join(l for l in stmt.splitlines() if not l.startswith("--")).strip()
            if body:
                self.all(body)


HOSTILE_SCRIPT = "<script>window.__pwned = 1</script>"
HOSTILE_IMG = "<img src=x onerror=\"window.__pwned = 2\">"


def fill(db):
    with open(os.path.join(HERE, "fill.sql")) as f:
        db.script(f.read())
    # Hostile content everywhere a person's or an agent's text can go.
    db.all(
        "SELECT mem_remember(?, ?)",
        RESOURCE,
        json.dumps({
            "type": "gotcha",
            "content": HOSTILE_SCRIPT + HOSTILE_IMG + " [click](javascript:window.__pwned=3)",
            "related_files": ["javascript:window.__pwned=4", "src/<svg onload=window.__pwned=5>.ts"],
            "tags": ["<b>bold</b>", "\u202eexe.txt"],
            "needs_review": True,
        }),
    )
    db.all(
        "SELECT mem_remember(?, ?)",
        RESOURCE,
        json.dumps({"type": "preference", "content": "\u202egnp.exe is how the RTL override looks"}),
    )
    db.all("SELECT mem_thread_create(?, ?, '{}', ?)", RESOURCE, HOSTILE_IMG, json.dumps({"id": "thread-hostile"}))
    db.all("SELECT mem_message_add('thread-hostile', 'user', ?)", (HOSTILE_SCRIPT + " ") * (MEGABYTE // 40))
    db.all("SELECT mem_message_add('thread-hostile', 'assistant', ?)", "<a href=\"javascript:window.__pwned=6\">click me</a>")
    db.all("SELECT task_create(?, ?)", HOSTILE_SCRIPT, json.dumps({"id": "task-hostile", "description": HOSTILE_IMG}))
    db.all(
        "SELECT graph_load(?, ?)",
        RESOURCE,
        json.dumps({
            "nodes": [{"id": "f-hostile", "type": "file", "label": HOSTILE_IMG, "file_path": "src/<script>.ts"}],
            "edges": [{"from": "f-hostile", "to": "f-redis", "type": "imports"}],
        }),
    )


class Panel:
    """`agentmem ui` running, and its address."""

    def __init__(self, args):
        db_args = ["--pg", args.pg] if args.pg else ["--db", args.db]
        self.proc = subprocess.Popen(
            [args.agentmem, *db_args, "ui", "--resource", RESOURCE],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        m = re.match(r"agentmem ui: (http://127\.0\.0\.1:(\d+)/)#token=([0-9a-f]{64})$", line.strip())
        assert m, f"unexpected first line: {line!r}"
        self.base, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        self.url = f"{self.base}#token={self.token}"

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read(), dict(r.getheaders())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def check_refusals(panel):
    body = json.dumps({"resource_id": RESOURCE})
    token = {"X-Agentmem-Token": panel.token}
    status, answer, headers = panel.request("POST", "/api/mem_health", body, token)
    assert status == 200, answer
    assert "db;dur=" in headers.get("Server-Timing", "")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "Access-Control-Allow-Origin" not in headers
    cases = [
        ("no token", {}, 401),
        ("a wrong token", {"X-Agentmem-Token": "0" * 64}, 401),
        ("another origin", {**token, "Origin": "http://evil.example"}, 403),
        ("another site", {**token, "Sec-Fetch-Site": "cross-site"}, 403),
        ("another host (DNS rebinding)", {**token, "Host": f"evil.example:{panel.port}"}, 403),
    ]
    for what, headers, want in cases:
        status, answer, _ = panel.request("POST", "/api/mem_health", body, headers)
        assert status == want, f"{what}: {status} {answer[:200]!r}"
    status, _, _ = panel.request("GET", "/api", headers={})
    assert status == 401
    status, _, _ = panel.request("POST", "/api/mem_forget", json.dumps({"resource_id": RESOURCE}), token)
    assert status == 404, "mem_forget must not be served"
    # A preflight is never granted, so a page of another origin cannot send the token.
    status, _, headers = panel.request(
        "OPTIONS", "/api/mem_health",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert status in (403, 405) and "Access-Control-Allow-Origin" not in headers
    print("panel: token, host and origin checks: ok")


def cross_origin_in_browser(driver, panel):
    """A real page on another origin tries the API with the token: the browser must fail."""

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>elsewhere</title><p>elsewhere</p>")

        def log_message(self, *a):
            pass

    evil = http.server.HTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        driver.get(f"http://localhost:{evil.server_port}/")
        outcome = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch(arguments[0] + 'api/mem_health', {method: 'POST',
                headers: {'Content-Type': 'application/json', 'X-Agentmem-Token': arguments[1]},
                body: JSON.stringify({resource_id: arguments[2]})})
              .then(r => r.text().then(t => done('read: ' + r.status + ' ' + t.slice(0, 80))))
              .catch(e => done('blocked'));
            """,
            panel.base, panel.token, RESOURCE,
        )
        assert outcome == "blocked", outcome
        # A simple (no preflight) POST from there is refused by the server too.
        outcome = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch(arguments[0] + 'api/mem_memory_deprecate', {method: 'POST', mode: 'no-cors',
                body: JSON.stringify({id: 'x'})}).then(() => done('sent'), () => done('blocked'));
            """,
            panel.base,
        )
        assert outcome in ("sent", "blocked")
    finally:
        evil.shutdown()
    print("panel: a page of another origin cannot call the API: ok")


class Browser:
    def __init__(self, args, panel):
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                  "--disable-gpu", "--no-first-run", "--lang=en-US"]:
            options.add_argument(a)
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_script_timeout(60)
        self.panel = panel
        self.args = args
        with open(args.axe) as f:
            self.axe = f.read()

    def open(self, route):
        self.driver.get(self.panel.base + route)
        return self.settled()

    def settled(self):
        """Waits until the page is drawn (not busy) and returns main."""
        d = self.driver
        try:
            WebDriverWait(d, 30).until(
                lambda d: d.execute_script(
                    "const m = document.getElementById('main');"
                    "return m && !m.hasAttribute('aria-busy') && m.children.length > 0"
                )
            )
        except TimeoutException:
            raise AssertionError(f"{d.current_url}: the page never settled")
        main = d.find_element(By.ID, "main")
        alerts = main.find_elements(By.CSS_SELECTOR, "[role=alert]")
        assert not alerts, f"{d.current_url}: {alerts[0].text}"
        return main

    def wait_for(self, condition, what):
        try:
            WebDriverWait(self.driver, 20).until(lambda d: condition())
        except TimeoutException:
            raise AssertionError(f"timed out waiting for {what}")

    def clean(self, page):
        """No script ran, no element came from the data, every link is a route."""
        d = self.driver
        assert d.execute_script("return window.__pwned") is None, f"{page}: a script from the data ran"
        found = d.execute_script(
            """
            const bad = [];
            if (document.querySelectorAll('script').length !== 1) bad.push('extra script');
            for (const el of document.querySelectorAll('main img, main iframe, main object, main embed, main b, main script'))
              bad.push('element ' + el.tagName);
            for (const el of document.querySelectorAll('*'))
              for (const a of el.attributes) if (a.name.startsWith('on')) bad.push('handler ' + a.name);
            for (const a of document.querySelectorAll('a'))
              if (!/^#(\\/|main$)/.test(a.getAttribute('href') || '')) bad.push('link ' + a.getAttribute('href'));
            return bad;
            """
        )
        assert not found, f"{page}: {found[:5]}"

    def accessible(self, page):
        d = self.driver
        d.execute_script(self.axe + "\nreturn true;")
        violations = d.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
              .then(r => done(r.violations.map(v => [v.id, v.impact, v.nodes.length,
                    v.nodes.slice(0, 2).map(n => n.target.join(' '))])))
              .catch(e => done([['axe failed', 'critical', 0, String(e)]]));
            """
        )
        serious = [v for v in violations if v[1] in ("serious", "critical")]
        assert not serious, f"{page}: axe-core: {serious}"

    def visit(self, name, route, check=None):
        main = self.open(route)
        if check:
            check(main)
        self.clean(name)
        self.accessible(name)
        os.makedirs(self.args.shots, exist_ok=True)
        self.driver.save_screenshot(os.path.join(self.args.shots, f"{self.args.name}-{name}.png"))
        return main

    def click(self, css, within=None):
        el = (within or self.driver).find_element(By.CSS_SELECTOR, css)
        el.click()
        return el


def run(args):
    db = Database(args)
    fill(db)
    memory_id = lambda content: db.one("SELECT id FROM mem_memories WHERE content = ?", content)[0]
    panel = Panel(args)
    browser = None
    try:
        check_refusals(panel)
        browser = Browser(args, panel)
        b, d = browser, browser.driver
        # The token arrives in the fragment and leaves the address bar.
        d.get(panel.url)
        b.settled()
        assert "token" not in d.current_url, d.current_url

        b.visit("health", "#/", lambda m: (
            assert_in("Health of project:demo", m.text),
            assert_in("score = round(40", m.text)))

        # Keyboard: the skip link first, then the pages; Enter follows a link.
        body = d.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        assert d.switch_to.active_element.text == "Skip to content"
        d.switch_to.active_element.send_keys(Keys.TAB)
        assert d.switch_to.active_element.text == "Health"
        d.switch_to.active_element.send_keys(Keys.TAB)
        d.switch_to.active_element.send_keys(Keys.ENTER)
        b.wait_for(lambda: d.current_url.endswith("#/memories"), "Enter on the Memories link")
        b.settled()

        # Search.
        main = b.visit("memories", "#/memories")
        box = main.find_element(By.NAME, "q")
        box.send_keys("migrate e2e")
        box.send_keys(Keys.ENTER)
        b.wait_for(lambda: "q=migrate" in d.current_url, "the search route")
        main = b.settled()
        assert "Run pnpm db:migrate" in main.text, main.text[:500]
        b.clean("search")
        b.visit("search-filtered", "#/memories?q=redis&file=src%2Fauth%2Ftoken.ts", lambda m: (
            assert_in("Cannot find module ./redis", m.text), assert_not_in("staging redis", m.text)))

        # Verify a memory on its page.
        decision = memory_id("Sessions live 1 hour")
        b.visit("memory", f"#/memory/{decision}", lambda m: assert_in("Provenance", m.text))
        b.click("#verify")
        b.wait_for(lambda: db.one("SELECT user_verified FROM mem_memories WHERE id = ?", decision)[0] == 1, "verify")
        b.settled()
        assert "verified" in d.find_element(By.ID, "main").text

        # The hostile memory's page: text, not markup.
        hostile = db.one("SELECT id FROM mem_memories WHERE content LIKE ?", "<script>%")[0]
        b.visit("memory-hostile", f"#/memory/{hostile}", lambda m: (
            assert_in(HOSTILE_SCRIPT, m.text), assert_in("javascript:window.__pwned=4", m.text)))

        # The review queue: confirm one, reject another.
        pin = memory_id("Always pin the docker base image by digest")
        staging = memory_id("The staging redis drops idle connections after 5 minutes")
        b.visit("review", "#/review", lambda m: assert_in("Review queue", m.text))
        b.click(f"li[data-id='{staging}'] button.reject")
        b.wait_for(lambda: db.one("SELECT deprecated FROM mem_memories WHERE id = ?", staging)[0] == 1, "reject")
        b.settled()
        b.click(f"li[data-id='{pin}'] button.confirm")
        b.wait_for(lambda: db.one("SELECT needs_review, user_verified FROM mem_memories WHERE id = ?", pin) == (0, 1), "confirm")
        b.settled()

        # Threads: archive one from the list; the hostile thread with its megabyte message.
        b.visit("threads", "#/threads")
        b.click("span[data-id='thread-docker'] button.archive")
        b.wait_for(lambda: db.one("SELECT state FROM mem_threads WHERE id = 'thread-docker'")[0] == "archived", "archive")
        b.settled()
        b.visit("thread", "#/thread/thread-login", lambda m: assert_in("pnpm db:migrate", m.text))
        main = b.visit("thread-hostile", "#/thread/thread-hostile", lambda m: assert_in("click me", m.text))
        for button in main.find_elements(By.XPATH, ".//button[starts-with(., 'Show all')]"):
            button.click()
        assert len(d.find_element(By.ID, "main").text) > MEGABYTE // 2
        b.clean("thread-hostile-all")

        # Tasks: claim a ready one; a task's dependency graph is drawn.
        b.visit("tasks", "#/tasks", lambda m: assert_in("Ready to work on", m.text))
        b.click("button.claim[data-id='task-migrate']")
        b.wait_for(lambda: db.one("SELECT session_id FROM mem_tasks WHERE id = 'task-migrate'")[0] == "panel", "claim")
        b.settled()
        b.visit("task", "#/task/task-ship", lambda m: (
            assert_equal(len(m.find_elements(By.CSS_SELECTOR, "svg.graph rect")), 3), assert_in("Blocked by", m.text)))
        b.visit("task-hostile", "#/task/task-hostile", lambda m: assert_in(HOSTILE_SCRIPT, m.text))

        # The code graph, drawn: a file's neighbourhood two hops out, and a file's impact.
        b.visit("graph", "#/graph?target=src%2Fauth%2Ftoken.ts&depth=2", lambda m: (
            assert_true(len(m.find_elements(By.CSS_SELECTOR, "svg.graph rect")) >= 4, "nodes drawn"),
            assert_in("src/lib/redis.ts", m.text)))
        b.visit("graph-impact", "#/graph?target=src%2Flib%2Fredis.ts&view=impact&depth=3", lambda m: (
            assert_in("dependents", m.text), assert_in("src/<script>.ts", m.text)))

        # Sessions and the session-end summary.
        b.visit("sessions", "#/sessions", lambda m: assert_in("s-demo", m.text))
        b.visit("session", "#/session/s-demo", lambda m: (
            assert_in("What was learned", m.text), assert_in("Wait, the client is not created", m.text)))

        cross_origin_in_browser(d, panel)
        print(f"panel ({args.name}): every page, its actions, hostile content and axe-core: ok")
    finally:
        if browser:
            browser.driver.quit()
        panel.stop()


def assert_in(part, whole):
    assert part in whole, f"{part!r} not in {whole[:600]!r}"


def assert_not_in(part, whole):
    assert part not in whole, f"{part!r} in {whole[:600]!r}"


def assert_equal(a, b):
    assert a == b, f"{a!r} != {b!r}"


def assert_true(v, what):
    assert v, what


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--agentmem", required=True)
    p.add_argument("--db")
    p.add_argument("--extension")
    p.add_argument("--pg")
    p.add_argument("--axe", required=True)
    p.add_argument("--shots", required=True)
    p.add_argument("--name", required=True)
    run(p.parse_args())
