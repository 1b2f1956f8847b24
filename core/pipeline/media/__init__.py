"""Tables, figures and equations as first-class knowledge: labels, images, descriptions (offline or by a
vision-language model), the chunks they become and the gallery. See docs/architecture.md, "Media items"."""
