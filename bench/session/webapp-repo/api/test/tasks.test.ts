import { describe, expect, it } from "vitest";
import { prisma } from "../src/db";
import { createMember, createProject, createTask, createWorkspace } from "./factories";
import { loginAs, setupApp } from "./helpers";

const { app } = setupApp();

describe("PATCH /tasks/:taskId", () => {
  it("updates the title and bumps the version", async () => {
    const workspace = await createWorkspace();
    const project = await createProject({ workspace });
    const member = await createMember(workspace, "member");
    const task = await createTask({ project, title: "Draft release notes" });

    const res = await app().inject({
      method: "PATCH",
      url: `/tasks/${task.id}`,
      headers: await loginAs(member),
      payload: { title: "Publish release notes" },
    });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: task.id, title: "Publish release notes", version: task.version + 1 });
    const stored = await prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(stored.title).toBe("Publish release notes");
  });

  it("forbids guests outside the project", async () => {
    const workspace = await createWorkspace();
    const project = await createProject({ workspace });
    const guest = await createMember(workspace, "guest", { projectIds: [] });
    const task = await createTask({ project });

    const res = await app().inject({
      method: "PATCH",
      url: `/tasks/${task.id}`,
      headers: await loginAs(guest),
      payload: { title: "Nope" },
    });

    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: { code: "forbidden", message: "errors.forbidden" } });
  });

  it("rejects an empty title", async () => {
    const workspace = await createWorkspace();
    const project = await createProject({ workspace });
    const member = await createMember(workspace);
    const task = await createTask({ project });

    const res = await app().inject({
      method: "PATCH",
      url: `/tasks/${task.id}`,
      headers: await loginAs(member),
      payload: { title: "   " },
    });

    expect(res.statusCode).toBe(422);
    expect(res.json().error.fields).toHaveProperty("title");
  });
});

describe("DELETE /tasks/:taskId", () => {
  it("soft-deletes the task", async () => {
    const workspace = await createWorkspace();
    const project = await createProject({ workspace });
    const admin = await createMember(workspace, "admin");
    const task = await createTask({ project });

    const res = await app().inject({ method: "DELETE", url: `/tasks/${task.id}`, headers: await loginAs(admin) });

    expect(res.statusCode).toBe(204);
    const stored = await prisma.task.findFirst({ where: { id: task.id, deletedAt: { not: null } } });
    expect(stored).not.toBeNull();
  });
});
