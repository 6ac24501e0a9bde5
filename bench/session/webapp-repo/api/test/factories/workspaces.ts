import { faker } from "@faker-js/faker";
import type { Role } from "../../src/auth/policy";
import { prisma } from "../../src/db";
import { createUser } from "./users";

export async function createWorkspace(overrides: { name?: string } = {}) {
  return prisma.workspace.create({ data: { name: overrides.name ?? faker.company.name() } });
}

export async function createMember(
  workspace: { id: string },
  role: Role = "member",
  options: { projectIds?: string[] } = {},
) {
  const user = await createUser();
  await prisma.membership.create({
    data: { userId: user.id, workspaceId: workspace.id, role, projectIds: options.projectIds ?? [] },
  });
  return user;
}

export async function createProject(options: { workspace?: { id: string }; name?: string } = {}) {
  const workspace = options.workspace ?? (await createWorkspace());
  return prisma.project.create({
    data: { workspaceId: workspace.id, name: options.name ?? faker.commerce.department() },
  });
}
