import { faker } from "@faker-js/faker";
import { randomBytes } from "node:crypto";
import type { Prisma } from "@prisma/client";
import { prisma } from "../../src/db";
import { signCookie, csrfFor } from "../../src/auth/cookies";

export function buildUser(overrides: Partial<Prisma.UserCreateInput> = {}): Prisma.UserCreateInput {
  const first = faker.person.firstName();
  return {
    email: faker.internet.email({ firstName: first, provider: "example.test" }).toLowerCase(),
    name: `${first} ${faker.person.lastName()}`,
    locale: "en",
    timeZone: "Europe/Berlin",
    ...overrides,
  };
}

export async function createUser(overrides: Partial<Prisma.UserCreateInput> = {}) {
  return prisma.user.create({ data: buildUser(overrides) });
}

export async function createSession(user: { id: string }) {
  const session = await prisma.session.create({
    data: { id: randomBytes(24).toString("hex"), userId: user.id, expiresAt: faker.date.soon({ days: 30 }) },
  });
  return { cookie: `sid=${signCookie(session.id)}`, csrfToken: csrfFor(session.id) };
}
