import type { FastifyInstance } from "fastify";
import websocket from "@fastify/websocket";
import { Redis } from "ioredis";
import { config } from "./config";
import { log } from "./log";
import { requireUser } from "./auth/requireUser";

export type DomainEvent =
  | { type: "task.created"; taskId: string; projectId: string; version: number }
  | { type: "task.updated"; taskId: string; projectId: string; version: number; task?: unknown }
  | { type: "task.moved"; taskId: string; projectId: string; version: number; status: string; position: number }
  | { type: "task.deleted"; taskId: string; projectId: string; version: number };

const publisher = new Redis(config.REDIS_URL);

export type UserEvent = { type: "notification.created"; notificationId: string };

/** Publish after the transaction commits; listeners may refetch immediately. */
export async function publish(workspaceId: string, event: DomainEvent): Promise<void> {
  await publisher.publish(`workspace:${workspaceId}`, JSON.stringify(event));
}

export async function publishToUser(userId: string, event: UserEvent): Promise<void> {
  await publisher.publish(`user:${userId}`, JSON.stringify(event));
}

export async function registerRealtime(app: FastifyInstance): Promise<void> {
  await app.register(websocket);
  app.get("/ws", { websocket: true, preHandler: [requireUser] }, (socket, request) => {
    const channels = [
      `user:${request.user.id}`,
      ...request.user.memberships.map((m) => `workspace:${m.workspaceId}`),
    ];
    const subscriber = new Redis(config.REDIS_URL);
    subscriber.subscribe(...channels).catch((err) => log.error({ err }, "realtime subscribe failed"));
    subscriber.on("message", (channel, message) => {
      socket.send(JSON.stringify({ channel, event: JSON.parse(message) }));
    });
    socket.on("close", () => {
      subscriber.quit().catch(() => undefined);
    });
  });
}
