"""The results browser in a real headless Chromium (Debian chromium + chromium-driver, via selenium):
load the page the tiny workflow built, from file:// and served over HTTP, filter, paginate, play audio.

Screenshots for the README: LALM_SCREENSHOTS=1 writes docs/img/browser.png and docs/img/report.png.
"""
import functools
import http.server
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import soundfile as sf

from tests.plots.tiny_run import tiny_results

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver "
                       "(apt-get install -y chromium chromium-driver)"),
]


@pytest.fixture(scope="module")
def wd():
    return tiny_results()


@pytest.fixture(scope="module")
def driver():
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (envs/core/requirements.txt)")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="lalm-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--autoplay-policy=no-user-gesture-required", "--mute-audio",
                 f"--user-data-dir={profile}", "--window-size=1300,1000"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _wait(fn, timeout=15.0, step=0.1):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()


def _select(drv, elem_id, value):
    from selenium.webdriver.support.ui import Select

    Select(drv.find_element("id", elem_id)).select_by_value(value)


def _shown(drv):
    return drv.execute_script("""
        return Array.from(document.querySelectorAll('.item')).map(function (b) {
          return {id: b.dataset.id, task: b.dataset.task,
                  rows: Array.from(b.querySelectorAll('tr.pred')).map(function (r) {
                    return Array.from(r.children).map(function (c) { return c.textContent; }); })};
        });""")


def test_filter_paginate_and_read_answers_from_disk(wd, driver):
    d = pd.read_parquet(wd / "results" / "tables" / "decisions.parquet")
    driver.get((wd / "results" / "browser" / "index.html").as_uri())
    assert _wait(lambda: "items" in driver.find_element("id", "summary").text)
    n_items = d.drop_duplicates(["task", "id"]).shape[0]
    assert f"of {n_items} items, {len(d)} answers in all" in driver.find_element("id", "summary").text
    assert len(_shown(driver)) == min(25, n_items)

    # one model: every answer row shown is that model's, and the items are exactly those it answered
    _select(driver, "f-model", "text-prior")
    shown = _shown(driver)
    assert shown and all(r[0] == "text-prior" and r[1] == "no-audio" for it in shown for r in it["rows"])
    tp = d[d.model == "text-prior"]
    assert driver.find_element("id", "summary").text.startswith(f"{tp.drop_duplicates(['task', 'id']).shape[0]} items")

    # task + condition + outcome: rows agree with the decisions (raw output, parsed label, gold)
    _select(driver, "f-model", "random")
    _select(driver, "f-task", "pitch-order")
    _select(driver, "f-condition", "audio")
    _select(driver, "f-prompt", "mcq-default")
    _select(driver, "f-outcome", "correct")
    want = d[(d.model == "random") & (d.task == "pitch-order") & (d.condition == "audio")
             & (d.prompt == "mcq-default") & (d.outcome == "correct")].set_index("id")
    shown = _shown(driver)
    assert sorted(it["id"] for it in shown) == sorted(want.index)
    for it in shown:
        (row,) = it["rows"]
        model, cond, prompt, raw, parsed, stage, outcome, official, gold = row
        w = want.loc[it["id"]]
        assert (raw, parsed, stage, outcome, gold) == (w.raw_output, w.pred_label, w.parse_status, "correct",
                                                       w.gold_label)
        # the official rule's score for this answer, marked where it disagrees with ours
        if "official_score" in want.columns and pd.notna(w.official_score):
            assert official.startswith(str(w.official_score).rstrip("0").rstrip(".") or "0")
            assert official.endswith("\u2260 ours") == bool(w.official_disagrees)
        else:
            assert official == ""
    # the gold option is marked in the options list
    gold_li = driver.find_element("css selector", ".item .options li.gold").text
    assert gold_li.startswith(f"{want.iloc[0].gold_label}. ") or len(shown) > 1

    # pagination with 10 per page over all items; the filter state lives in the URL hash
    for elem_id in ("f-model", "f-task", "f-condition", "f-prompt", "f-outcome"):
        _select(driver, elem_id, "")
    _select(driver, "f-size", "10")
    assert driver.find_element("id", "page-info").text == f"page 1 of {-(-n_items // 10)}"
    driver.find_element("id", "next").click()
    assert driver.find_element("id", "page-info").text.startswith("page 2 of")
    assert "page=2" in driver.current_url and "size=10" in driver.current_url
    driver.refresh()
    assert _wait(lambda: driver.find_element("id", "page-info").text.startswith("page 2 of"))

    # text search over ids, questions and outputs
    search = driver.find_element("id", "f-text")
    search.clear()
    first_id = d.iloc[0]["id"]
    search.send_keys(first_id)
    assert _wait(lambda: [it["id"] for it in _shown(driver)] == [first_id])
    if os.environ.get("LALM_SCREENSHOTS"):
        search.clear()
        search.send_keys("\b")
        _select(driver, "f-task", "scene-order")
        driver.execute_script("window.scrollTo(0, 0)")
        (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(ROOT / "docs" / "img" / "browser.png"))


def _play_first_audio(driver):
    return driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        var a = document.querySelector('.item audio');
        a.preload = 'auto';
        a.play().then(function () {
          setTimeout(function () { done({t: a.currentTime, d: a.duration, rs: a.readyState, err: null, src: a.src}); }, 700);
        }).catch(function (e) { done({t: a.currentTime, d: a.duration, rs: a.readyState, err: String(e), src: a.src}); });
    """)


def _expected_duration(wd, driver):
    rel = driver.execute_script("return document.querySelector('.item audio').getAttribute('src')")
    path = (wd / "results" / "browser" / rel).resolve()
    info = sf.info(str(path))
    return info.frames / info.samplerate


def test_audio_plays_from_disk(wd, driver):
    driver.get((wd / "results" / "browser" / "index.html").as_uri() + "#task=scene-order")
    assert _wait(lambda: driver.find_elements("css selector", ".item audio"))
    driver.set_script_timeout(20)
    res = _play_first_audio(driver)
    assert res["err"] is None, res
    assert res["rs"] >= 2 and res["t"] > 0, res  # data loaded and the playhead moved
    assert abs(res["d"] - _expected_duration(wd, driver)) < 0.05, res


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_page_and_audio_work_when_served(wd, driver):
    handler = functools.partial(_Quiet, directory=str(wd / "results"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/browser/index.html")
        assert _wait(lambda: driver.find_elements("css selector", ".item audio"))
        driver.set_script_timeout(20)
        res = _play_first_audio(driver)
        assert res["err"] is None and res["rs"] >= 2 and res["t"] > 0, res
        assert res["src"].startswith("http://127.0.0.1")
    finally:
        server.shutdown()
        server.server_close()


def test_report_opens_and_shows_a_figure(wd, driver):
    driver.get((wd / "results" / "report.html").as_uri())
    assert _wait(lambda: "Audio reliance" in driver.find_element("tag name", "body").text, timeout=30)
    driver.find_element("xpath", "//*[normalize-space(text())='Audio reliance']").click()
    assert _wait(lambda: driver.find_elements("xpath", "//*[normalize-space(text())='Figure']"))
    driver.find_element("xpath", "//*[normalize-space(text())='Figure']").click()
    assert _wait(lambda: "results/figures/reliance.png" in driver.find_element("tag name", "body").text)
    eye = driver.find_element("xpath", "//*[contains(text(),'reliance.png')]/following::*[name()='svg'][1]")
    driver.execute_script("var e = arguments[0]; (e.closest('a,button') || e.parentNode).click();", eye)
    # the figure is shown: an image that decoded to a real size
    assert _wait(lambda: driver.execute_script(
        "return Array.from(document.images).some(function (i) { return i.complete && i.naturalWidth > 500; })"))
    if os.environ.get("LALM_SCREENSHOTS"):
        (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(ROOT / "docs" / "img" / "report.png"))


def test_a_transcript_is_shown_beside_its_reference_and_its_own_score(tmp_path, driver):
    """An ASR item's row puts the reference (and the item's errors over its words) next to the transcript."""
    from lalmbench.core import io
    from lalmbench.report.browser.build import write_browser

    items = [{"id": "1089-134686-0001", "task": "ls", "dataset": "ls", "audio_path": None, "options": [],
              "question": "Transcribe the speech.", "references": ["STUFF IT INTO YOU HIS BELLY COUNSELLED HIM"]}]
    io.write_jsonl(tmp_path / "ls.jsonl", items)
    pd.DataFrame({"model": ["cascade-asr"], "dataset": "ls", "task": "ls", "condition": "audio", "prompt": "p",
                  "id": ["1089-134686-0001"], "raw_output": ["Stuff it into his belly-cough and sell him."],
                  "errors": [4.0], "n_ref": [8.0]}).to_parquet(tmp_path / "decisions.parquet")
    page = tmp_path / "browser" / "index.html"
    write_browser([str(tmp_path / "ls.jsonl")], str(tmp_path / "decisions.parquet"), out_html=str(page),
                  out_data=str(page.with_name("data.js")), root=tmp_path)
    driver.get(page.as_uri())
    assert _wait(lambda: _shown(driver))
    row = _shown(driver)[0]["rows"][0]
    assert row[3] == "Stuff it into his belly-cough and sell him."
    assert row[-1] == "STUFF IT INTO YOU HIS BELLY COUNSELLED HIM4 errors / 8 reference units (50.0%)"
    headers = driver.execute_script("return Array.from(document.querySelectorAll('.item th')).map(h => h.textContent)")
    assert headers[-1] == "reference"
