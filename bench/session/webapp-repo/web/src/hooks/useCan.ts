import { useMe } from "../api/queries/useMe";

// Mirrors the API's policy matrix for hiding UI; the API check is the one that counts.
type Role = "owner" | "admin" | "member" | "guest";
type Action = "task:update" | "task:delete" | "project:create" | "project:update" | "workspace:invite" | "billing:manage";

const allowed: Record<Action, readonly Role[]> = {
  "task:update": ["owner", "admin", "member", "guest"],
  "task:delete": ["owner", "admin", "member"],
  "project:create": ["owner", "admin", "member"],
  "project:update": ["owner", "admin"],
  "workspace:invite": ["owner", "admin"],
  "billing:manage": ["owner"],
};

export function useCan(action: Action, resource: { workspaceId: string; projectId?: string } | undefined): boolean {
  const { me } = useMe();
  if (!me || !resource) return false;
  const membership = me.workspaces.find((w) => w.id === resource.workspaceId);
  if (!membership || !allowed[action].includes(membership.role)) return false;
  if (membership.role === "guest" && resource.projectId) return membership.projectIds.includes(resource.projectId);
  return true;
}
