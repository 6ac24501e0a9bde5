import { Prisma } from "@prisma/client";
import type { SessionUser } from "../auth/requireUser";
import { visibleProjectIds } from "../auth/policy";
import { prisma } from "../db";

export interface SearchHit {
  id: string;
  projectId: string;
  title: string;
  status: string;
  rank: number;
}

/**
 * Full-text search over task titles and descriptions (see the searchVector
 * migration). Never LIKE on user content: it cannot use the GIN index.
 */
export async function searchTasks(
  user: SessionUser,
  workspaceId: string,
  query: string,
  limit = 20,
): Promise<SearchHit[]> {
  const trimmed = query.trim();
  if (trimmed.length < 2) return [];

  const projectIds = visibleProjectIds(user, workspaceId);
  const projectFilter =
    projectIds === null
      ? Prisma.empty
      : projectIds.length === 0
        ? Prisma.sql`AND false`
        : Prisma.sql`AND t."projectId" IN (${Prisma.join(projectIds)})`;

  return prisma.$queryRaw<SearchHit[]>`
    SELECT t.id, t."projectId", t.title, t.status::text AS status,
           ts_rank(t."searchVector", q) AS rank
    FROM tasks t, websearch_to_tsquery('simple', ${trimmed}) q
    WHERE t."workspaceId" = ${workspaceId}
      AND t."deletedAt" IS NULL
      AND t."searchVector" @@ q
      ${projectFilter}
    ORDER BY rank DESC, t."updatedAt" DESC
    LIMIT ${limit}
  `;
}
