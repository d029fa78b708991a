"""The dashboard's environments (API.md "Environments", issue 31) in Chromium against the real
server: the picker switches a tab to another environment's values and stream, and the promote
dialog previews its diff (a dry run: nothing written) and then promotes one key, which reaches
the promoted environment's stream and only that one.

Reuses test_dashboard's server, browser and page helpers (pytest puts this directory on the
import path); run with `make browser-test`.
"""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from test_dashboard import (  # noqa: F401 (fixtures are used by name)
    browser, driver, http, make_server, open_dashboard, page_state, server, wait, wait_pref, wait_ready,
)


def pick_environment(d, name):
    Select(d.find_element(By.ID, "env-select")).select_by_value(name)
    wait(d, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-environment") == name, 5,
         f"the page never switched to {name}")


def test_switch_environment_preview_and_promote_one_key(server, browser):
    assert http(server, "PUT", "/environments/staging")[0] == 201
    assert http(server, "PUT", "/environments/staging/preferences/age", {"value": 41})[0] == 200
    assert http(server, "PUT", "/environments/staging/preferences/name", {"value": "stage"})[0] == 200

    # Tab A stays on default; tab B switches to staging and shows staging's values.
    open_dashboard(browser, server)
    wait_ready(browser)
    wait_pref(browser, "age", 5)
    tab_default = browser.current_window_handle
    browser.switch_to.new_window("window")
    tab_staging = browser.current_window_handle
    open_dashboard(browser, server)
    wait_ready(browser)
    options = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#env-select option")]
    assert options == ["default", "staging"]
    pick_environment(browser, "staging")
    wait_ready(browser)
    wait_pref(browser, "age", 41)
    wait_pref(browser, "name", "stage")

    # A change in staging reaches staging's tab, not default's.
    assert http(server, "PUT", "/environments/staging/preferences/age", {"value": 42})[0] == 200
    wait_pref(browser, "age", 42)
    browser.switch_to.window(tab_default)
    assert page_state(browser)["prefs"]["age"]["value"] == 5

    # Promote `age` from staging into default: the preview shows the one change and writes nothing.
    browser.find_element(By.ID, "promote-open").click()
    wait(browser, lambda d: d.find_element(By.ID, "promote-panel").is_displayed(), 5, "promote dialog never opened")
    assert browser.find_element(By.ID, "promote-target").text == "default"
    assert Select(browser.find_element(By.ID, "promote-from")).first_selected_option.get_attribute("value") == "staging"
    browser.find_element(By.ID, "promote-keys").send_keys("age")
    browser.find_element(By.ID, "promote-preview").click()
    wait(browser, lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, "#promote-diff li")] == ["age: 5 → 42"], 5,
         "the preview never showed age: 5 → 42")
    status, record = http(server, "GET", "/preferences/age")
    assert status == 200 and record["value"] == 5, record

    # The real promotion reaches default's stream (this tab) and leaves staging and `name` alone.
    browser.find_element(By.ID, "promote-submit").click()
    wait(browser, lambda d: not d.find_element(By.ID, "promote-panel").is_displayed(), 5, "promote dialog stayed open")
    wait_pref(browser, "age", 42)
    assert page_state(browser)["prefs"]["name"]["value"] == "fat"
    status, history = http(server, "GET", "/history?limit=1")
    assert history["changes"][0]["reason"] == "promote from staging", history
    browser.switch_to.window(tab_staging)
    wait_pref(browser, "age", 42)
    assert page_state(browser)["prefs"]["name"]["value"] == "stage"
