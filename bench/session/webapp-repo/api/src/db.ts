import { PrismaClient, type Prisma } from "@prisma/client";
import { config } from "./config";

const softDeleted = ["Task", "Project"] as const;

const base = new PrismaClient({
  datasourceUrl: config.DATABASE_URL,
  log: config.NODE_ENV === "development" ? ["warn", "error"] : ["error"],
});

// Soft-deleted rows are invisible to every read unless a query asks for
// deletedAt explicitly.
export const prisma = base.$extends({
  query: {
    $allModels: {
      async $allOperations({ model, operation, args, query }) {
        const reads = ["findFirst", "findMany", "findUnique", "count", "aggregate"];
        if (softDeleted.includes(model as (typeof softDeleted)[number]) && reads.includes(operation)) {
          const a = args as { where?: Record<string, unknown> };
          if (!a.where || !("deletedAt" in a.where)) {
            a.where = { ...a.where, deletedAt: null };
          }
        }
        return query(args);
      },
    },
  },
});

export type Db = typeof prisma;
export type Tx = Omit<Db, "$connect" | "$disconnect" | "$on" | "$transaction" | "$use" | "$extends">;

/**
 * Collects side effects (emails, queue pushes, realtime events) to run once the
 * surrounding transaction has committed, so a rollback never leaks them.
 */
export function afterCommit() {
  const pending: Array<() => Promise<unknown> | unknown> = [];
  return {
    add(fn: () => Promise<unknown> | unknown) {
      pending.push(fn);
    },
    async run() {
      for (const fn of pending.splice(0)) await fn();
    },
  };
}

export type { Prisma };
