/** Where an inference server answers, and what every request to it must carry (its API key, if any). */
export interface ServerAddress {
  baseUrl: string;
  headers: Readonly<Record<string, string>>;
}
