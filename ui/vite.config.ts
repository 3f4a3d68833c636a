import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// `CAIRN_DEV_API=http://127.0.0.1:PORT npm run dev` forwards /api to a running service,
// so the dev server behaves like the page the service serves itself. The service answers
// only requests addressed to itself from its own page (Host and Origin are checked against
// DNS rebinding), so the proxy presents the service's own address for both.
const devApi = process.env.CAIRN_DEV_API;

export default defineConfig({
  plugins: [svelte()],
  // Relative asset URLs: the same build is loaded by Tauri and served at `/` by the service.
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
  },
  server: devApi
    ? {
        proxy: {
          "/api": {
            target: devApi,
            changeOrigin: true,
            configure: (proxy) => {
              proxy.on("proxyReq", (req) => {
                if (req.getHeader("origin")) req.setHeader("origin", new URL(devApi).origin);
              });
            },
          },
        },
      }
    : {},
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
