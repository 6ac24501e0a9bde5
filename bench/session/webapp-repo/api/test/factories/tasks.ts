import { faker } from "@faker-js/faker";
import type { Prisma } from "@prisma/client";
import { prisma } from "../../src/db";
import { createProject } from "./workspaces";

type TaskOverrides = Partial<Omit<Prisma.TaskUncheckedCreateInput, "projectId" | "workspaceId">>;

export function buildTask(
  project: { id: string; workspaceId: string },
  overrides: TaskOverrides = {},
): Prisma.TaskUncheckedCreateInput {
  return {
    projectId: project.id,
    workspaceId: project.workspaceId,
    title: faker.hacker.phrase().slice(0, 120),
    status: "todo",
    position: faker.number.int({ min: 0, max: 1000 }),
    ...overrides,
  };
}

export async function createTask(
  options: { project?: { id: string; workspaceId: string }; assignee?: { id: string } } & TaskOverrides = {},
) {
  const { project: given, assignee, ...overrides } = options;
  const project = given ?? (await createProject());
  return prisma.task.create({
    data: buildTask(project, { assigneeId: assignee?.id, ...overrides }),
  });
}
