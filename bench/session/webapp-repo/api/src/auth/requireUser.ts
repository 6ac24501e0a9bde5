import type { FastifyReply, FastifyRequest } from "fastify";
import { prisma } from "../db";
import { AppError } from "../errors";
import type { Role } from "./policy";

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  locale: string;
  timeZone: string;
  memberships: Array<{ workspaceId: string; role: Role; projectIds: string[] }>;
}

declare module "fastify" {
  interface FastifyRequest {
    user: SessionUser;
  }
}

const THIRTY_DAYS = 30 * 24 * 60 * 60 * 1000;

export async function requireUser(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const sid = request.cookies.sid && request.unsignCookie(request.cookies.sid);
  if (!sid || !sid.valid || !sid.value) throw new AppError("unauthenticated");

  const session = await prisma.session.findUnique({
    where: { id: sid.value },
    include: {
      user: {
        select: {
          id: true,
          email: true,
          name: true,
          locale: true,
          timeZone: true,
          memberships: { select: { workspaceId: true, role: true, projectIds: true } },
        },
      },
    },
  });
  if (!session || session.expiresAt < new Date()) throw new AppError("unauthenticated");

  // Sliding expiry, but write at most once an hour per session.
  const expiresAt = new Date(Date.now() + THIRTY_DAYS);
  if (expiresAt.getTime() - session.expiresAt.getTime() > 60 * 60 * 1000) {
    await prisma.session.update({ where: { id: session.id }, data: { expiresAt } });
  }
  request.user = session.user;
}
