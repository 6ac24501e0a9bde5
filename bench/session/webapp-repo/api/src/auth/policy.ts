import { AppError } from "../errors";
import type { SessionUser } from "./requireUser";

export type Role = "owner" | "admin" | "member" | "guest";

export type Action =
  | "task:read"
  | "task:create"
  | "task:update"
  | "task:delete"
  | "project:read"
  | "project:create"
  | "project:update"
  | "project:delete"
  | "workspace:invite"
  | "workspace:manage"
  | "billing:manage";

const matrix: Record<Action, readonly Role[]> = {
  "task:read": ["owner", "admin", "member", "guest"],
  "task:create": ["owner", "admin", "member", "guest"],
  "task:update": ["owner", "admin", "member", "guest"],
  "task:delete": ["owner", "admin", "member"],
  "project:read": ["owner", "admin", "member", "guest"],
  "project:create": ["owner", "admin", "member"],
  "project:update": ["owner", "admin"],
  "project:delete": ["owner", "admin"],
  "workspace:invite": ["owner", "admin"],
  "workspace:manage": ["owner", "admin"],
  "billing:manage": ["owner"],
};

export interface Resource {
  workspaceId: string;
  /** Set for anything that belongs to a project; guests are limited to theirs. */
  projectId?: string;
}

export function roleIn(user: SessionUser, workspaceId: string): Role | null {
  return user.memberships.find((m) => m.workspaceId === workspaceId)?.role ?? null;
}

export function can(user: SessionUser, action: Action, resource: Resource): boolean {
  const membership = user.memberships.find((m) => m.workspaceId === resource.workspaceId);
  if (!membership || !matrix[action].includes(membership.role)) return false;
  if (membership.role === "guest" && resource.projectId) {
    return membership.projectIds.includes(resource.projectId);
  }
  return true;
}

export function assertCan(user: SessionUser, action: Action, resource: Resource): void {
  if (!can(user, action, resource)) throw new AppError("forbidden");
}

/** Project ids a user may list in a workspace; null means all of them. */
export function visibleProjectIds(user: SessionUser, workspaceId: string): string[] | null {
  const membership = user.memberships.find((m) => m.workspaceId === workspaceId);
  if (!membership) return [];
  return membership.role === "guest" ? membership.projectIds : null;
}
