"""Local websites for the host's browser to open: fixture pages on a free loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

from server.common.browser_address_policy import AddressPolicy

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Where the fixture sites listen: loopback, which the host's browsers are refused unless
# allowed, so the tests' engines and hubs allow this address (and only it).
SITE_HOST = "127.0.0.1"
SITES_ALLOWED = AddressPolicy.from_entries([SITE_HOST])


@dataclass
class Site:
    """A running site: its base URL and every request's path and headers, in order."""

    base: str = ""
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def headers_of(self, path: str) -> dict[str, str]:
        return [h for p, h in self.requests if p == path][-1]


def pages_app(
    pages: Mapping[str, str], *, routes: Mapping[str, Handler] | None = None
) -> web.Application:
    """An app that answers each path of ``pages`` with its HTML (after ``routes``), else 404."""

    async def page(request: web.Request) -> web.Response:
        body = pages.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    for path, handler in (routes or {}).items():
        app.router.add_get(path, handler)
    app.router.add_get("/{tail:.*}", page)
    return app


@asynccontextmanager
async def serving(
    app: web.Application, host: str = SITE_HOST, port: int = 0
) -> AsyncIterator[Site]:
    """Serves ``app`` on ``port`` of ``host`` (a free one by default) until the block ends,
    recording requests."""
    site = Site()

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        site.requests.append((request.path, dict(request.headers)))
        return await handler(request)

    app.middlewares.append(record)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        site.base = f"http://{host}:{runner.addresses[0][1]}"
        yield site
    finally:
        await runner.cleanup()


# A sign-in that posts its form and answers with a new page.
SIGN_IN_FORM = """<!doctype html><title>Sign in</title><h1>Sign in</h1>
<form method="post" action="/signin">
<label>Email <input name="email" type="email" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>"""
# A single-page sign-in: the password goes by fetch and the page shows its next step, so
# the tab keeps its document after the entry.
SIGN_IN_SPA = """<!doctype html><title>Sign in</title><h1>Sign in to the shop</h1>
<form id="f"><label>Password <input name="password" type="password"></label>
<button type="submit">Next</button></form><p id="step"></p>
<script>
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  await fetch('/api/login', {method: 'POST', body: e.target.password.value});
  document.getElementById('step').textContent = 'Enter the code we sent you';
});
</script>"""
# The code field sends focus back to the password: entry cannot fill it and falls back.
SIGN_IN_STUBBORN = """<!doctype html><title>Sign in</title>
<form id="f"><label>Password <input name="password" type="password"></label>
<label>Code <input name="code" autocomplete="one-time-code"></label>
<button type="submit">Next</button></form>
<script>
const pw = document.querySelector('input[name=password]');
document.querySelector('input[name=code]').addEventListener('focus', () => pw.focus());
</script>"""
CHECKOUT = """<!doctype html><title>Checkout</title>
<form method="post" action="/pay">
<label>Card number <input name="cc" autocomplete="cc-number"></label>
<label>Security code <input name="csc" autocomplete="cc-csc"></label>
<button type="submit" style="position: fixed; left: 0; right: 0; bottom: 0; height: 40vh">Pay
</button></form>PREVIEW"""
# A card preview that shows the number as it is typed: the page itself echoes it.
CARD_PREVIEW = """<p id="preview"></p><script>
document.querySelector('input[name=cc]').addEventListener('input', (e) => {
  document.getElementById('preview').textContent = e.target.value;
});
</script>"""
SIGN_IN_PAGES = {
    "/signin": SIGN_IN_FORM,
    "/spa": SIGN_IN_SPA,
    "/stubborn": SIGN_IN_STUBBORN,
    "/checkout": CHECKOUT.replace("PREVIEW", ""),
    "/checkout-preview": CHECKOUT.replace("PREVIEW", CARD_PREVIEW),
    "/welcome": "<!doctype html><title>Welcome</title><h1>Hello</h1>",
}


@dataclass
class Posted:
    """What a sign-in site was sent: each POST's path and body, in order."""

    bodies: list[tuple[str, str]] = field(default_factory=list)


def sign_in_app(posted: Posted) -> web.Application:
    """The sign-in pages of ``SIGN_IN_PAGES``; a POST is recorded in ``posted``, and the
    form's POST is answered with a redirect to ``/welcome``."""

    async def answer(request: web.Request) -> web.StreamResponse:
        if request.method == "POST":
            posted.bodies.append((request.path, await request.text()))
            if request.path == "/signin":
                raise web.HTTPSeeOther("/welcome")
            return web.Response(text="ok")
        if request.path not in SIGN_IN_PAGES:
            raise web.HTTPNotFound()
        return web.Response(text=SIGN_IN_PAGES[request.path], content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app
