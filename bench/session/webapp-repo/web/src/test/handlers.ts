import { http, HttpResponse } from "msw";
import type { TaskDetail } from "@tandem/shared/schemas/task";

const api = (path: string) => `*/api${path}`;

export const sampleTask: TaskDetail = {
  id: "cm3task0000001",
  projectId: "cm3proj0000001",
  title: "Prepare the sprint review",
  status: "todo",
  position: 0,
  dueAt: "2026-12-03T09:00:00.000Z",
  assignee: { id: "cm3user0000001", name: "Ada Lovelace", avatarUrl: null },
  version: 1,
  description: null,
  createdAt: "2026-11-20T08:00:00.000Z",
  doneAt: null,
};

export const handlers = [
  http.get(api("/me"), () =>
    HttpResponse.json({
      id: "cm3user0000001",
      name: "Ada Lovelace",
      email: "ada@example.test",
      locale: "en",
      timeZone: "Europe/Berlin",
      workspaces: [{ id: "cm3ws00000001", name: "Acme", role: "member", projectIds: [] }],
    }),
  ),
  http.get(api("/projects/:projectId/tasks"), () => HttpResponse.json({ items: [sampleTask], nextCursor: null })),
  http.get(api("/tasks/:taskId"), () => HttpResponse.json(sampleTask)),
  http.patch(api("/tasks/:taskId"), async ({ request }) =>
    HttpResponse.json({ ...sampleTask, ...((await request.json()) as object), version: sampleTask.version + 1 }),
  ),
];
