
"%

xx

sÿnaten.sin.default