import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./fixtures";

test("creates a task from the board and opens it", async ({ loggedInPage: page, workspace }) => {
  await page.goto(`/projects/${workspace.projectId}`);

  await page.getByTestId("add-task").click();
  await page.getByRole("textbox", { name: /title/i }).fill("Plan the offsite");
  await Promise.all([
    page.waitForResponse((r) => r.url().includes("/tasks") && r.request().method() === "POST"),
    page.keyboard.press("Enter"),
  ]);

  const card = page.getByTestId("task-card").filter({ hasText: "Plan the offsite" });
  await expect(card).toBeVisible();
  await card.getByRole("button").click();
  await expect(page.getByRole("complementary", { name: /task details/i })).toBeVisible();
});

test("the board has no accessibility violations", async ({ loggedInPage: page, workspace }) => {
  await page.goto(`/projects/${workspace.projectId}`);
  await expect(page.getByRole("navigation").first()).toBeVisible();
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations).toEqual([]);
});
