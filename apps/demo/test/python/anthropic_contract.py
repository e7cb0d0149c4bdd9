"""
Contract of the Managed Agents surface driven by the official Python SDK (`anthropic`, pinned by
the test), sync and async, against a running demo server. Run by
`apps/demo/test/anthropic-python-sdk.contract.test.ts`, which starts the server with a gated model
and releases its steps when this script asks (a line `@@release <json>` on stdout, answered on
stdin with `ok`), so the Live Inbox edits happen while the Run is at a known point.

Every client validates every answer against the SDK's own pydantic models
(`_strict_response_validation=True`): a field the SDK types non-null that comes back null fails.
Environment: INBOX_KIT_BASE_URL, INBOX_KIT_OWNER_KEY, INBOX_KIT_STRANGER_KEY. Exit code 0 when
every check held; a failed check raises (traceback on stderr, exit code 1).
"""
import asyncio
import datetime
import json
import os
import sys

import anthropic

BASE = os.environ["INBOX_KIT_BASE_URL"]
OWNER = os.environ["INBOX_KIT_OWNER_KEY"]
STRANGER = os.environ["INBOX_KIT_STRANGER_KEY"]


def release(text, more):
    """Asks the test to answer the pending model step with `text` (`more`: the Run goes on)."""
    print("@@release " + json.dumps({"text": text, "more": more}), flush=True)
    assert sys.stdin.readline().strip() == "ok"


def text(t):
    return [{"type": "text", "text": t}]


def text_of(content):
    return "".join(getattr(b, "text", "") or "" for b in (content or []))


def client(key=OWNER):
    return anthropic.Anthropic(api_key=key, base_url=BASE, max_retries=0, _strict_response_validation=True)


def aclient(key=OWNER):
    return anthropic.AsyncAnthropic(api_key=key, base_url=BASE, max_retries=0, _strict_response_validation=True)


def loose(key=OWNER):
    """A client without strict validation, for the generic calls whose answer has no body (204)."""
    return anthropic.Anthropic(api_key=key, base_url=BASE, max_retries=0)


def aloose(key=OWNER):
    return anthropic.AsyncAnthropic(api_key=key, base_url=BASE, max_retries=0)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


EXPECTED_TYPES = ["user.message", "session.status_running", "agent.message", "user.message", "user.message", "agent.message", "session.status_idle"]


def sync_contract():
    c = client()
    # The seeded Session was created through POST /sessions: its agent snapshot and environment_id
    # are the Runtime's (strict validation would reject null ones).
    seeded = c.beta.sessions.retrieve("sess_001")
    expect(seeded.agent.id == "runtime" and seeded.environment_id == "default", f"seeded session fields: {seeded.agent.id} {seeded.environment_id}")

    created = c.beta.sessions.create(agent="assistant", environment_id="env_py", title="Python", metadata={"team": "py"})
    expect(created.type == "session" and created.status == "idle" and created.agent.id == "assistant", "create")
    expect(isinstance(created.created_at, datetime.datetime), "created_at is a datetime")
    expect(c.beta.sessions.retrieve(created.id).id == created.id, "retrieve")
    updated = c.beta.sessions.update(created.id, title="Renamed", metadata={"team": None, "stage": "beta"})
    expect(updated.title == "Renamed" and updated.metadata == {"stage": "beta"}, f"update: {updated.metadata}")
    more = [c.beta.sessions.create(agent="assistant", environment_id=f"env_{i}").id for i in range(3)]
    listed = [s.id for s in c.beta.sessions.list(limit=2)]
    expect(set([created.id, *more]) <= set(listed) and len(set(listed)) == len(listed), "list auto-paging")
    expect("sess_001" in listed, "list includes the Sessions of POST /sessions")
    # created_at filters as the SDK sends them: aware datetimes and naive ones (read as UTC).
    newest = c.beta.sessions.list(limit=1).data[0]
    at = newest.created_at
    naive = at.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    expect(more[2] in [s.id for s in c.beta.sessions.list(created_at_gte=at, limit=100)], "created_at[gte] aware")
    expect(more[2] in [s.id for s in c.beta.sessions.list(created_at_gte=naive, limit=100)], "created_at[gte] naive")
    expect(c.beta.sessions.list(created_at_gt=naive).data == [], "created_at[gt] naive")
    archived = c.beta.sessions.archive(more[0])
    expect(archived.archived_at is not None, "archive")
    deleted = c.beta.sessions.delete(more[1])
    expect(deleted.id == more[1] and deleted.type == "session_deleted", "delete")

    # A steered Run, streamed.
    session = c.beta.sessions.create(agent="assistant", environment_id="env_run", title="Steered")
    li = f"/v1/awaken/sessions/{session.id}/live-inbox"
    streamed = []
    with c.beta.sessions.events.stream(session.id) as stream:
        sent = c.beta.sessions.events.send(session.id, events=[{"type": "user.message", "content": text("Plan the trip")}])
        expect(sent.data[0].type == "user.message", "send")
        while not c.get(li, cast_to=object)["active"]:
            pass
        a = c.post(li, body={"content": text("Prefer trains")}, cast_to=object)
        b = c.post(li, body={"content": text("Budget 500")}, cast_to=object)
        raw = loose()
        raw.put(f"{li}/{b['id']}", body={"content": text("Budget 800")}, cast_to=object)
        raw.put(f"{li}/order", body={"order": [b["id"], a["id"]]}, cast_to=object)
        try:
            raw.put(f"{li}/order", body={"order": [a["id"]]}, cast_to=object)
            raise AssertionError("a stale order must be refused")
        except anthropic.ConflictError as e:
            expect(e.request_id and e.request_id.startswith("req_"), "409 request_id")
            expect(e.response.headers.get("x-should-retry") == "false", "409 x-should-retry: false")
        release("Looking at options", True)
        release("Booked trains within 800", False)
        for event in stream:
            streamed.append(event)
            if event.type == "session.status_idle":
                break
    types = [e.type for e in streamed]
    expect(types == EXPECTED_TYPES, f"streamed {types}")
    drained = [text_of(e.content) for e in streamed if e.type == "user.message"][1:]
    expect(drained == ["Budget 800", "Prefer trains"], f"drained {drained}")
    expect(streamed[-1].stop_reason.type == "end_turn", "stop_reason")

    # events.list: auto-paging gives the committed history; filters.
    history = [e.id for e in c.beta.sessions.events.list(session.id, limit=2)]
    expect(history == [e.id for e in streamed], "events.list auto-paging")
    desc = [e.type for e in c.beta.sessions.events.list(session.id, limit=2, order="desc")]
    expect(desc == list(reversed(types)), "events.list desc")
    only = [e.type for e in c.beta.sessions.events.list(session.id, types=["agent.message", "session.status_idle"])]
    expect(only == ["agent.message", "agent.message", "session.status_idle"], f"types filter {only}")
    last = streamed[-1].processed_at
    expect(list(c.beta.sessions.events.list(session.id, created_at_gt=last)) == [], "events created_at[gt]")

    # Errors: NotFoundError with request_id on every sessions and events method of an unknown Session.
    for call in (
        lambda: c.beta.sessions.retrieve("sess_missing"),
        lambda: c.beta.sessions.update("sess_missing", title="x"),
        lambda: c.beta.sessions.archive("sess_missing"),
        lambda: c.beta.sessions.delete("sess_missing"),
        lambda: c.beta.sessions.events.list("sess_missing"),
        lambda: c.beta.sessions.events.send("sess_missing", events=[{"type": "user.message", "content": text("hi")}]),
        lambda: c.beta.sessions.events.stream("sess_missing"),
    ):
        try:
            call()
            raise AssertionError("an unknown Session must be NotFoundError")
        except anthropic.NotFoundError as e:
            expect(e.request_id and e.request_id.startswith("req_"), "404 request_id")
            expect(e.response.headers.get("request-id") == e.request_id, "request-id header")
            expect(e.body["error"]["code"] == "session_not_found", f"code {e.body}")
    try:
        client(STRANGER).beta.sessions.retrieve(created.id)
        raise AssertionError("another tenant's Session must be NotFoundError")
    except anthropic.NotFoundError:
        pass
    try:
        client("sk-not-a-key").beta.sessions.list()
        raise AssertionError("a bad key must be AuthenticationError")
    except anthropic.AuthenticationError as e:
        expect(e.request_id.startswith("req_"), "401 request_id")
    try:
        c.beta.sessions.events.list("sess_001", order="sideways")
        raise AssertionError("a bad order must be BadRequestError")
    except anthropic.BadRequestError as e:
        expect(e.body["error"]["code"] == "validation_error", "400 code")
    # With the SDK's default retries, a 409 is not retried (x-should-retry: false): one request.
    running = c.beta.sessions.create(agent="assistant", environment_id="env_busy", initial_events=[{"type": "user.message", "content": text("go")}])
    retrying = anthropic.Anthropic(api_key=OWNER, base_url=BASE, max_retries=2)
    raw = retrying.beta.sessions.with_raw_response
    try:
        raw.delete(running.id)
        raise AssertionError("deleting a running Session must be ConflictError")
    except anthropic.ConflictError as e:
        expect(e.response.headers.get("x-should-retry") == "false", "409 x-should-retry")
        expect(e.response.request.headers.get("x-stainless-retry-count") == "0", "the 409 was not retried")
    release("done", False)


async def async_contract():
    c = aclient()
    seeded = await c.beta.sessions.retrieve("sess_001")
    expect(seeded.agent.id == "runtime" and seeded.environment_id == "default", "async seeded")
    created = await c.beta.sessions.create(agent="assistant", environment_id="env_async", title="Async")
    expect((await c.beta.sessions.retrieve(created.id)).title == "Async", "async retrieve")
    expect((await c.beta.sessions.update(created.id, title="Async 2")).title == "Async 2", "async update")
    ids = [s.id async for s in c.beta.sessions.list(limit=2)]
    expect(created.id in ids and "sess_001" in ids, "async list")
    naive = created.created_at.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    expect(created.id in [s.id async for s in c.beta.sessions.list(created_at_gte=naive, limit=100)], "async naive filter")

    session = await c.beta.sessions.create(agent="assistant", environment_id="env_async_run")
    li = f"/v1/awaken/sessions/{session.id}/live-inbox"
    streamed = []
    async with await c.beta.sessions.events.stream(session.id) as stream:
        await c.beta.sessions.events.send(session.id, events=[{"type": "user.message", "content": text("Plan the trip")}])
        while not (await c.get(li, cast_to=object))["active"]:
            await asyncio.sleep(0.01)
        a = await c.post(li, body={"content": text("Prefer trains")}, cast_to=object)
        b = await c.post(li, body={"content": text("Budget 500")}, cast_to=object)
        raw = aloose()
        await raw.put(f"{li}/{b['id']}", body={"content": text("Budget 800")}, cast_to=object)
        await raw.put(f"{li}/order", body={"order": [b["id"], a["id"]]}, cast_to=object)
        release("Looking at options", True)
        release("Booked trains within 800", False)
        async for event in stream:
            streamed.append(event)
            if event.type == "session.status_idle":
                break
    types = [e.type for e in streamed]
    expect(types == EXPECTED_TYPES, f"async streamed {types}")
    history = [e.id async for e in c.beta.sessions.events.list(session.id, limit=3)]
    expect(history == [e.id for e in streamed], "async events.list")
    expect((await c.beta.sessions.archive(created.id)).archived_at is not None, "async archive")
    expect((await c.beta.sessions.delete(created.id)).type == "session_deleted", "async delete")
    try:
        await c.beta.sessions.events.list("sess_missing")
        raise AssertionError("async unknown Session")
    except anthropic.NotFoundError as e:
        expect(e.request_id.startswith("req_"), "async 404 request_id")
    try:
        await c.beta.sessions.events.stream("sess_missing")
        raise AssertionError("async unknown Session stream")
    except anthropic.NotFoundError:
        pass


sync_contract()
print("sync ok", flush=True)
asyncio.run(async_contract())
print("async ok", flush=True)
