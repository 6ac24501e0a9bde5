import { Body, Button, Container, Head, Heading, Html, Preview, Text } from "@react-email/components";
import type { TFunction } from "i18next";
import { config } from "../config";

interface TaskAssignedProps {
  t: TFunction;
  taskId: string;
  actorId: string;
}

export function TaskAssigned({ t, taskId }: TaskAssignedProps) {
  const url = `${config.APP_URL}/tasks/${taskId}`;
  return (
    <Html>
      <Head />
      <Preview>{t("taskAssigned.preview")}</Preview>
      <Body style={{ fontFamily: "Inter, Arial, sans-serif", backgroundColor: "#f6f7f9" }}>
        <Container style={{ padding: "24px", backgroundColor: "#ffffff", borderRadius: "8px" }}>
          <Heading as="h1" style={{ fontSize: "20px" }}>
            {t("taskAssigned.heading")}
          </Heading>
          <Text>{t("taskAssigned.body")}</Text>
          <Button href={url} style={{ backgroundColor: "#4f46e5", color: "#ffffff", padding: "10px 16px", borderRadius: "6px" }}>
            {t("taskAssigned.cta")}
          </Button>
          <Text style={{ color: "#6b7280", fontSize: "12px" }}>{t("common.footer")}</Text>
        </Container>
      </Body>
    </Html>
  );
}
