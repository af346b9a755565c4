"""What the browser tools share: finding targets, the refusals, reading and acting on a page."""
