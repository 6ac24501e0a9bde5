import { test as base, expect, type Page } from "@playwright/test";

const apiUrl = process.env.E2E_API_URL ?? "http://localhost:3000";

interface Workspace {
  id: string;
  projectId: string;
  user: { id: string; email: string };
  sessionCookie: string;
}

// Each test gets its own workspace (seeded through the test-only endpoint), so
// tests never share data and run in parallel.
export const test = base.extend<{ workspace: Workspace; loggedInPage: Page }>({
  workspace: async ({ request }, use) => {
    const res = await request.post(`${apiUrl}/__test__/workspaces`, { data: { withProject: true } });
    expect(res.ok()).toBeTruthy();
    const workspace = (await res.json()) as Workspace;
    await use(workspace);
    await request.delete(`${apiUrl}/__test__/workspaces/${workspace.id}`);
  },

  loggedInPage: async ({ page, context, workspace, baseURL }, use) => {
    await context.addCookies([
      { name: "sid", value: workspace.sessionCookie, url: baseURL!, httpOnly: true, sameSite: "Lax" },
    ]);
    await use(page);
  },
});

export { expect };
