"""What a consent prompt shows of a gated call: a script is shown whole, as it will run."""

from __future__ import annotations

from server.host.agents.providers.transcript import ToolCall
from server.host.agents.turn_loop import CONSENT_CODE_SHOWN, consent_summary


def test_a_scripts_consent_prompt_shows_the_script() -> None:
    script = "await click('#a');\n" * 50
    call = ToolCall(id="c1", name="run_script", arguments={"tabId": "t1", "script": script})
    summary = consent_summary(call)
    assert summary.startswith('run_script {"tabId": "t1"}\n')
    assert summary.endswith(script)


def test_a_very_long_script_says_what_it_leaves_out() -> None:
    code = "x" * (CONSENT_CODE_SHOWN + 10)
    call = ToolCall(id="c1", name="execute_script", arguments={"target": "sandbox", "code": code})
    assert consent_summary(call).endswith("[... 10 more characters not shown]")


def test_other_tools_keep_their_short_summary() -> None:
    call = ToolCall(id="c1", name="click", arguments={"tabId": "t1", "target": "#go"})
    assert consent_summary(call) == 'click {"tabId": "t1", "target": "#go"}'
