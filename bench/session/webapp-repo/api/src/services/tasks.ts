import type { CreateTaskBody, UpdateTaskBody } from "@tandem/shared/schemas/task";
import { parseISO } from "date-fns";
import { assertCan, visibleProjectIds } from "../auth/policy";
import type { SessionUser } from "../auth/requireUser";
import { cache, cacheKeys } from "../cache";
import { afterCommit, prisma } from "../db";
import { AppError } from "../errors";
import { publish } from "../realtime";
import { notify } from "./notifications";

const summarySelect = {
  id: true,
  projectId: true,
  title: true,
  status: true,
  position: true,
  dueAt: true,
  version: true,
  assignee: { select: { id: true, name: true, avatarUrl: true } },
} as const;

const detailSelect = { ...summarySelect, workspaceId: true, description: true, createdAt: true, doneAt: true } as const;

async function loadTask(taskId: string) {
  const task = await prisma.task.findUnique({ where: { id: taskId }, select: detailSelect });
  if (!task) throw new AppError("task_not_found");
  return task;
}

export async function listTasks(user: SessionUser, projectId: string, query: { cursor?: string; limit: number }) {
  const project = await prisma.project.findUnique({ where: { id: projectId }, select: { workspaceId: true } });
  if (!project) throw new AppError("project_not_found");
  assertCan(user, "task:read", { workspaceId: project.workspaceId, projectId });

  const rows = await prisma.task.findMany({
    where: { projectId },
    select: summarySelect,
    orderBy: [{ status: "asc" }, { position: "asc" }, { id: "asc" }],
    take: query.limit + 1,
    ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
  });
  const items = rows.slice(0, query.limit);
  return { items, nextCursor: rows.length > query.limit ? items[items.length - 1].id : null };
}

export async function getTask(user: SessionUser, taskId: string) {
  const task = await loadTask(taskId);
  assertCan(user, "task:read", task);
  return task;
}

export async function createTask(user: SessionUser, projectId: string, input: CreateTaskBody) {
  const project = await prisma.project.findUnique({ where: { id: projectId }, select: { workspaceId: true } });
  if (!project) throw new AppError("project_not_found");
  assertCan(user, "task:create", { workspaceId: project.workspaceId, projectId });

  const last = await prisma.task.findFirst({
    where: { projectId, status: input.status },
    orderBy: { position: "desc" },
    select: { position: true },
  });
  const task = await prisma.task.create({
    data: {
      ...input,
      dueAt: input.dueAt ? parseISO(input.dueAt) : null,
      workspaceId: project.workspaceId,
      projectId,
      position: (last?.position ?? -1) + 1,
    },
    select: detailSelect,
  });

  await cache.del(cacheKeys.projectStats(task.workspaceId, projectId));
  await publish(task.workspaceId, { type: "task.created", taskId: task.id, projectId, version: task.version });
  if (task.assignee && task.assignee.id !== user.id) {
    await notify(task.assignee.id, "task_assigned", { taskId: task.id, actorId: user.id });
  }
  return task;
}

export async function updateTask(user: SessionUser, taskId: string, patch: UpdateTaskBody) {
  const current = await loadTask(taskId);
  assertCan(user, "task:update", current);

  const after = afterCommit();
  const task = await prisma.$transaction(async (tx) => {
    const updated = await tx.task.update({
      where: { id: taskId },
      data: {
        ...patch,
        dueAt: patch.dueAt === undefined ? undefined : patch.dueAt && parseISO(patch.dueAt),
        doneAt: patch.status === undefined ? undefined : patch.status === "done" ? new Date() : null,
        version: { increment: 1 },
      },
      select: detailSelect,
    });
    after.add(() => publish(updated.workspaceId, { type: "task.updated", taskId, projectId: updated.projectId, version: updated.version, task: updated }));
    if (patch.assigneeId && patch.assigneeId !== current.assignee?.id && patch.assigneeId !== user.id) {
      after.add(() => notify(patch.assigneeId!, "task_assigned", { taskId, actorId: user.id }));
    }
    return updated;
  });
  await after.run();
  await cache.del(cacheKeys.projectStats(task.workspaceId, task.projectId));
  return task;
}

export async function deleteTask(user: SessionUser, taskId: string) {
  const task = await loadTask(taskId);
  assertCan(user, "task:delete", task);
  await prisma.task.update({ where: { id: taskId }, data: { deletedAt: new Date(), version: { increment: 1 } } });
  await cache.del(cacheKeys.projectStats(task.workspaceId, task.projectId));
  await publish(task.workspaceId, { type: "task.deleted", taskId, projectId: task.projectId, version: task.version + 1 });
}

export function visibleTaskFilter(user: SessionUser, workspaceId: string) {
  const projectIds = visibleProjectIds(user, workspaceId);
  return projectIds === null ? { workspaceId } : { workspaceId, projectId: { in: projectIds } };
}
