import { afterAll, beforeAll } from "vitest";
import { buildApp, type App } from "../src/app";
import { prisma } from "../src/db";
import { createSession } from "./factories";

// Truncates every table once per test file; tests inside a file build on
// their own data through the factories.
export async function resetDatabase(): Promise<void> {
  const tables = await prisma.$queryRaw<Array<{ tablename: string }>>`
    SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
  `;
  const list = tables.map((t) => `"public"."${t.tablename}"`).join(", ");
  await prisma.$executeRawUnsafe(`TRUNCATE ${list} RESTART IDENTITY CASCADE`);
}

export function setupApp(): { app: () => App } {
  let app: App;
  beforeAll(async () => {
    await resetDatabase();
    app = await buildApp();
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });
  return { app: () => app };
}

/** Returns the headers a logged-in browser would send (cookie + CSRF). */
export async function loginAs(user: { id: string }): Promise<Record<string, string>> {
  const { cookie, csrfToken } = await createSession(user);
  return { cookie, "x-csrf-token": csrfToken };
}
