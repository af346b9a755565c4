/// <reference types="vitest/config" />
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The hub serves the built files at /app/ (see server/hub/http/web_client.py).
// Its Content-Security-Policy allows no inline scripts, so nothing may be inlined as a script.
export default defineConfig({
  base: '/app/',
  plugins: [preact()],
  build: {
    // Into the Python package, so a built wheel or image carries the client.
    outDir: '../server/hub/http/web_dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    proxy: {
      '/v1': 'http://127.0.0.1:8765',
    },
  },
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.{ts,tsx}'],
    // One page per worker, emptied before each file (tests/setup.ts).
    isolate: false,
    setupFiles: ['tests/setup.ts'],
    restoreMocks: true,
  },
});
