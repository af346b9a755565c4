"""An owner's background tasks: closed, cancelled without waiting, or drained."""

from __future__ import annotations

import asyncio

from server.common.tasks import BackgroundTasks, wait_set


async def test_close_cancels_what_runs_and_waits_for_it() -> None:
    tasks = BackgroundTasks("test")
    ended = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    tasks.start(forever())
    await asyncio.sleep(0)
    await tasks.close()
    assert ended.is_set()
    assert len(tasks) == 0


async def test_cancel_asks_every_task_to_stop_without_waiting() -> None:
    tasks = BackgroundTasks("test")
    task = tasks.spawn(asyncio.Event().wait())
    tasks.cancel()
    assert not task.done()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert len(tasks) == 0


async def test_drain_waits_for_tasks_started_while_it_waits_and_cancels_none() -> None:
    tasks = BackgroundTasks("test")
    done: list[str] = []
    go = asyncio.Event()

    async def second() -> None:
        done.append("second")

    async def first() -> None:
        await go.wait()
        tasks.start(second())
        done.append("first")

    tasks.start(first())
    draining = asyncio.create_task(tasks.drain())
    await asyncio.sleep(0)
    go.set()
    await draining
    assert done == ["first", "second"]
    assert len(tasks) == 0


async def test_an_adopted_task_is_kept_until_it_ends_and_cancelled_with_the_rest() -> None:
    tasks = BackgroundTasks("test")
    finished = asyncio.create_task(asyncio.sleep(0))
    tasks.adopt(finished)
    await finished
    await asyncio.sleep(0)  # the done callback runs on the next turn of the loop
    assert len(tasks) == 0

    waiting = asyncio.create_task(asyncio.Event().wait())
    tasks.adopt(waiting)
    assert len(tasks) == 1
    await tasks.close()
    assert waiting.cancelled()


async def test_wait_set_answers_whether_the_event_came_in_time() -> None:
    event = asyncio.Event()
    assert await wait_set(event, 0.01) is False
    event.set()
    assert await wait_set(event, 60) is True


async def test_a_cancel_that_comes_as_the_event_is_set_ends_the_waiter() -> None:
    # asyncio.wait_for on 3.11 answered the event here and the cancel was lost: a
    # sender loop stopped at that moment ran on, and its owner's close never returned.
    event = asyncio.Event()
    waiter = asyncio.create_task(wait_set(event, 60))
    await asyncio.sleep(0)  # the waiter waits
    event.set()
    waiter.cancel()
    await asyncio.wait({waiter}, timeout=5)
    assert waiter.cancelled()
