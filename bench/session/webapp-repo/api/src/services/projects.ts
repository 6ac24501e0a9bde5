import { assertCan, visibleProjectIds } from "../auth/policy";
import type { SessionUser } from "../auth/requireUser";
import { cache, cacheKeys } from "../cache";
import { prisma } from "../db";
import { AppError } from "../errors";

export async function listProjects(user: SessionUser, workspaceId: string) {
  assertCan(user, "project:read", { workspaceId });
  const projectIds = visibleProjectIds(user, workspaceId);
  return prisma.project.findMany({
    where: { workspaceId, ...(projectIds === null ? {} : { id: { in: projectIds } }) },
    select: { id: true, name: true, updatedAt: true },
    orderBy: { name: "asc" },
  });
}

export async function projectStats(user: SessionUser, projectId: string) {
  const project = await prisma.project.findUnique({ where: { id: projectId }, select: { workspaceId: true } });
  if (!project) throw new AppError("project_not_found");
  assertCan(user, "project:read", { workspaceId: project.workspaceId, projectId });

  return cache.wrap(cacheKeys.projectStats(project.workspaceId, projectId), 60, async () => {
    const groups = await prisma.task.groupBy({
      by: ["status"],
      where: { projectId, deletedAt: null },
      _count: { _all: true },
    });
    const counts = Object.fromEntries(groups.map((g) => [g.status, g._count._all]));
    return { todo: counts.todo ?? 0, inProgress: counts.in_progress ?? 0, done: counts.done ?? 0 };
  });
}

export async function createProject(user: SessionUser, workspaceId: string, name: string) {
  assertCan(user, "project:create", { workspaceId });
  return prisma.project.create({ data: { workspaceId, name }, select: { id: true, name: true, updatedAt: true } });
}
