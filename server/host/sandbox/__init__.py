"""The sandbox: agent JavaScript in QuickJS compiled to WebAssembly, off the event loop."""
